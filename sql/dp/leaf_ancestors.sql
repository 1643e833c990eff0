-- Every leaf of one hierarchy version with its ancestor on each level: the node id, the
-- leaves below that node (granularity's domain share is leaves / all leaves) and whether it
-- is the root (the entropy score's suppressed values). SafePub's candidates are scored by
-- joining the sample's histogram to this on (leaf, level).
SELECT c.descendant AS leaf, c.distance AS level, c.ancestor AS node, a.leaves AS leaves,
       CASE WHEN a.level = :top THEN 1 ELSE 0 END AS is_root
FROM anonsql_hierarchy_closure AS c
JOIN anonsql_hierarchy_node AS a ON a.hierarchy = :name AND a.id = c.ancestor
JOIN anonsql_hierarchy_node AS l ON l.hierarchy = :name AND l.id = c.descendant AND l.level = 0
WHERE c.hierarchy = :name
