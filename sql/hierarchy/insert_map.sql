-- One version's leaves mapped to their ancestors on every level, read off its closure.
INSERT INTO anonsql_hierarchy_map (hierarchy, level, value, generalized, node)
SELECT CAST(:name AS VARCHAR), c.distance, leaf.label, anc.label, anc.id
FROM anonsql_hierarchy_node AS leaf
JOIN anonsql_hierarchy_closure AS c ON c.hierarchy = :name AND c.descendant = leaf.id
JOIN anonsql_hierarchy_node AS anc ON anc.hierarchy = :name AND anc.id = c.ancestor
WHERE leaf.hierarchy = :name AND leaf.level = 0
