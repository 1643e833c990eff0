-- The closure is derived in SQL from the parent links, so every engine computes it itself.
INSERT INTO anonsql_hierarchy_closure (hierarchy, ancestor, descendant, distance)
WITH RECURSIVE up (ancestor, descendant, distance) AS (
  SELECT n.id, n.id, 0 FROM anonsql_hierarchy_node AS n WHERE n.hierarchy = :name
  UNION ALL
  SELECT n.parent, up.descendant, up.distance + 1
  FROM up
  JOIN anonsql_hierarchy_node AS n ON n.hierarchy = :name AND n.id = up.ancestor
  WHERE n.parent IS NOT NULL
)
SELECT CAST(:name AS VARCHAR), up.ancestor, up.descendant, up.distance FROM up
