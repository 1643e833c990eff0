CREATE OR REPLACE TABLE "people_k5" AS
SELECT
  CASE
    WHEN NOT sup.k0 IS NULL OR m0.node IS NULL OR m1.node IS NULL
    THEN '*'
    ELSE m0.generalized
  END AS "age",
  CASE
    WHEN NOT sup.k0 IS NULL OR m0.node IS NULL OR m1.node IS NULL
    THEN '*'
    ELSE m1.generalized
  END AS "sex",
  CASE
    WHEN NOT sup.k0 IS NULL OR m0.node IS NULL OR m1.node IS NULL
    THEN '*'
    ELSE CAST(s."zip""; --" AS TEXT)
  END AS "zip""; --",
  s."income" AS "income"
FROM "people" AS s
LEFT JOIN (
  /* Leaf label -> its ancestor's label on one level, read off the closure table. */
  SELECT
    leaf.label AS value,
    anc.label AS generalized,
    anc.id AS node
  FROM anonsql_hierarchy_node AS leaf
  JOIN anonsql_hierarchy_closure AS c
    ON c.hierarchy = 'age' AND c.descendant = leaf.id AND c.distance = 1
  JOIN anonsql_hierarchy_node AS anc
    ON anc.hierarchy = 'age' AND anc.id = c.ancestor
  WHERE
    leaf.hierarchy = 'age' AND leaf.level = 0
) AS m0
  ON m0.value = CAST(s."age" AS TEXT)
LEFT JOIN (
  /* Leaf label -> its ancestor's label on one level, read off the closure table. */
  SELECT
    leaf.label AS value,
    anc.label AS generalized,
    anc.id AS node
  FROM anonsql_hierarchy_node AS leaf
  JOIN anonsql_hierarchy_closure AS c
    ON c.hierarchy = 'sex' AND c.descendant = leaf.id AND c.distance = 1
  JOIN anonsql_hierarchy_node AS anc
    ON anc.hierarchy = 'sex' AND anc.id = c.ancestor
  WHERE
    leaf.hierarchy = 'sex' AND leaf.level = 0
) AS m1
  ON m1.value = CAST(s."sex" AS TEXT)
LEFT JOIN (
  SELECT
    class[1] AS k0,
    class[2] AS k1,
    class[3] AS k2
  FROM anonsql_suppressed
  WHERE
    run_id = 7
) AS sup
  ON sup.k0 = m0.generalized
  AND sup.k1 = m1.generalized
  AND sup.k2 = CAST(s."zip""; --" AS TEXT)
