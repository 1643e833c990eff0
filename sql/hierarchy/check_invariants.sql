-- Closure-table invariants of one stored hierarchy; every count must be zero.
SELECT
  -- nodes that do not reach the root
  (SELECT COUNT(*) FROM anonsql_hierarchy_node AS n
    WHERE n.hierarchy = :name AND NOT EXISTS (
      SELECT 1 FROM anonsql_hierarchy_closure AS c
      JOIN anonsql_hierarchy_node AS r ON r.hierarchy = :name AND r.id = c.ancestor
      WHERE c.hierarchy = :name AND c.descendant = n.id AND r.parent IS NULL)) AS unrooted,
  -- closure distances that differ from the level difference
  (SELECT COUNT(*) FROM anonsql_hierarchy_closure AS c
    JOIN anonsql_hierarchy_node AS a ON a.hierarchy = :name AND a.id = c.ancestor
    JOIN anonsql_hierarchy_node AS d ON d.hierarchy = :name AND d.id = c.descendant
    WHERE c.hierarchy = :name AND c.distance <> a.level - d.level) AS bad_distances,
  -- nodes whose stored leaf count differs from the leaves below them in the closure
  (SELECT COUNT(*) FROM anonsql_hierarchy_node AS n
    WHERE n.hierarchy = :name AND n.leaves <> (
      SELECT COUNT(*) FROM anonsql_hierarchy_closure AS c
      JOIN anonsql_hierarchy_node AS d ON d.hierarchy = :name AND d.id = c.descendant
      WHERE c.hierarchy = :name AND c.ancestor = n.id AND d.level = 0)) AS bad_leaf_counts,
  -- leaves whose path to the root is shorter or longer than the height
  (SELECT COUNT(*) FROM anonsql_hierarchy_node AS n
    WHERE n.hierarchy = :name AND n.level = 0 AND (
      SELECT COUNT(*) FROM anonsql_hierarchy_closure AS c
      WHERE c.hierarchy = :name AND c.descendant = n.id) <> (
      SELECT h.height FROM anonsql_hierarchy AS h WHERE h.key = :name)) AS bad_depths,
  -- number of roots (must be one)
  (SELECT COUNT(*) FROM anonsql_hierarchy_node AS n
    WHERE n.hierarchy = :name AND n.parent IS NULL) - 1 AS extra_roots
