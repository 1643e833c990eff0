-- Leaf label -> its ancestor's label and node id on one level: one version's map. A value
-- with two different rows (a map written twice by two processes at once where the engine
-- has no keys, or edited) is left out, so the guard suppresses it rather than count its rows
-- twice or under a class it does not belong to; identical rows count once. MIN = MAX says
-- "one distinct value" as COUNT(DISTINCT ...) = 1 does (both skip NULLs) in one plain
-- aggregate: a distinct count is a second aggregation per column (Spark plans it as an
-- Expand and two more shuffles per QI, a second of every read on a local session).
SELECT m.value, MIN(m.generalized) AS generalized, MIN(m.node) AS node
FROM anonsql_hierarchy_map AS m
WHERE m.hierarchy = :name AND m.level = :level
GROUP BY m.value
HAVING MIN(m.generalized) = MAX(m.generalized) AND MIN(m.node) = MAX(m.node)
