-- hierarchical EMD (Li et al.): for every inner node N of the sensitive hierarchy,
-- level(N) / top level * min(positive, negative extra of N's children).
WITH leaf_extra AS (
  SELECT c.class_id, n.id AS node, COALESCE(cs.c, 0) / c.vals - o.q AS extra
  FROM classes AS c
  CROSS JOIN overall AS o
  JOIN anonsql_hierarchy_node AS n ON n.hierarchy = :h AND n.level = 0 AND n.label = o.s
  LEFT JOIN class_sensitive AS cs ON cs.class_id = c.class_id AND cs.s = o.s
), node_extra AS (
  SELECT le.class_id, cl.ancestor AS node, SUM(le.extra) AS extra
  FROM leaf_extra AS le
  JOIN anonsql_hierarchy_closure AS cl ON cl.hierarchy = :h AND cl.descendant = le.node
  GROUP BY le.class_id, cl.ancestor
), per_parent AS (
  SELECT
    ne.class_id,
    n.parent,
    SUM(GREATEST(ne.extra, 0)) AS pos,
    SUM(GREATEST(-ne.extra, 0)) AS neg
  FROM node_extra AS ne
  JOIN anonsql_hierarchy_node AS n ON n.hierarchy = :h AND n.id = ne.node
  WHERE NOT n.parent IS NULL
  GROUP BY ne.class_id, n.parent
)
SELECT pp.class_id, SUM(CAST(p.level AS DOUBLE) / :top * LEAST(pp.pos, pp.neg)) AS value
FROM per_parent AS pp
JOIN anonsql_hierarchy_node AS p ON p.hierarchy = :h AND p.id = pp.parent
GROUP BY pp.class_id
