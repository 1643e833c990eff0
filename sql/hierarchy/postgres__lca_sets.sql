-- Lowest common ancestor of each set of nodes (seed 004, section 2.1). PostgreSQL has no
-- ARG_MIN: the first ancestor in level order is taken from an ordered array instead.
SELECT cand.set_id, (ARRAY_AGG(cand.ancestor ORDER BY cand.level))[1] AS lca
FROM (
  SELECT s.set_id, c.ancestor, n.level
  FROM :sets AS s
  JOIN anonsql_hierarchy_closure AS c ON c.hierarchy = :name AND c.descendant = s.node
  JOIN anonsql_hierarchy_node AS n ON n.hierarchy = :name AND n.id = c.ancestor
  JOIN (SELECT t.set_id, COUNT(DISTINCT t.node) AS k FROM :sets AS t GROUP BY t.set_id) AS sz
    ON sz.set_id = s.set_id
  GROUP BY s.set_id, c.ancestor, n.level, sz.k
  HAVING COUNT(DISTINCT s.node) = sz.k
) AS cand
GROUP BY cand.set_id
