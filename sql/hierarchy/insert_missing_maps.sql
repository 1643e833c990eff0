-- The maps of the versions stored before the map table existed (a database written by an
-- earlier anonsql), derived as insert_map.sql derives one version's.
INSERT INTO anonsql_hierarchy_map (hierarchy, level, value, generalized, node)
SELECT leaf.hierarchy, c.distance, leaf.label, anc.label, anc.id
FROM anonsql_hierarchy_node AS leaf
JOIN anonsql_hierarchy_closure AS c ON c.hierarchy = leaf.hierarchy AND c.descendant = leaf.id
JOIN anonsql_hierarchy_node AS anc ON anc.hierarchy = leaf.hierarchy AND anc.id = c.ancestor
WHERE leaf.level = 0
  AND leaf.hierarchy NOT IN (SELECT DISTINCT m.hierarchy FROM anonsql_hierarchy_map AS m)
