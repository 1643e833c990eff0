SELECT
  h0.id AS q0,
  h1.id AS q1,
  h2.id AS q2,
  g.n AS n
FROM (
  SELECT
    CAST("age" AS TEXT) AS v0,
    CAST("sex" AS TEXT) AS v1,
    CAST("zip""; --" AS TEXT) AS v2,
    COUNT(*) AS n
  FROM "people"
  GROUP BY
    1,
    2,
    3
) AS g
LEFT JOIN "anonsql_hierarchy_node" AS h0
  ON h0.hierarchy = 'age' AND h0.level = 0 AND h0.label = g.v0
LEFT JOIN "anonsql_hierarchy_node" AS h1
  ON h1.hierarchy = 'sex' AND h1.level = 0 AND h1.label = g.v1
LEFT JOIN "anonsql_hierarchy_node" AS h2
  ON h2.hierarchy = 'zip"; --' AND h2.level = 0 AND h2.label = g.v2
