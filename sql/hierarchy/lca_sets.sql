-- Lowest common ancestor of each set of nodes: among the ancestors shared by every member,
-- the one on the lowest level (seed 004, section 2.1). The lowest is picked with ROW_NUMBER,
-- which every target engine has (PostgreSQL has no ARG_MIN).
SELECT ranked.set_id, ranked.ancestor AS lca
FROM (
  SELECT cand.set_id, cand.ancestor,
    ROW_NUMBER() OVER (PARTITION BY cand.set_id ORDER BY cand.level) AS rn
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
) AS ranked
WHERE ranked.rn = 1
