-- Leaf label -> its ancestor's label on one level, read off the closure table.
SELECT leaf.label AS value, anc.label AS generalized, anc.id AS node
FROM anonsql_hierarchy_node AS leaf
JOIN anonsql_hierarchy_closure AS c
  ON c.hierarchy = :name AND c.descendant = leaf.id AND c.distance = :level
JOIN anonsql_hierarchy_node AS anc ON anc.hierarchy = :name AND anc.id = c.ancestor
WHERE leaf.hierarchy = :name AND leaf.level = 0
