-- Leaf label -> its ancestor's label and node id on one level: one version's map. A value
-- with two different rows (a map written twice by two processes at once where the engine
-- has no keys, or edited) is left out, so the guard suppresses it rather than count its rows
-- twice or under a class it does not belong to; identical rows count once.
SELECT m.value, MIN(m.generalized) AS generalized, MIN(m.node) AS node
FROM anonsql_hierarchy_map AS m
WHERE m.hierarchy = :name AND m.level = :level
GROUP BY m.value
HAVING COUNT(DISTINCT m.generalized) = 1 AND COUNT(DISTINCT m.node) = 1
