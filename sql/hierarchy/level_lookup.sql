-- Leaf label -> its ancestor's label and node id on one level: one version's map.
SELECT m.value, m.generalized, m.node
FROM anonsql_hierarchy_map AS m
WHERE m.hierarchy = :name AND m.level = :level
