SELECT
  CAST(s."age" AS TEXT) AS "age",
  m1.generalized AS "sex",
  m2.generalized AS "zip""; --"
FROM "people" AS s
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
  /* Leaf label -> its ancestor's label on one level, read off the closure table. */
  SELECT
    leaf.label AS value,
    anc.label AS generalized,
    anc.id AS node
  FROM anonsql_hierarchy_node AS leaf
  JOIN anonsql_hierarchy_closure AS c
    ON c.hierarchy = 'zip"; --' AND c.descendant = leaf.id AND c.distance = 2
  JOIN anonsql_hierarchy_node AS anc
    ON anc.hierarchy = 'zip"; --' AND anc.id = c.ancestor
  WHERE
    leaf.hierarchy = 'zip"; --' AND leaf.level = 0
) AS m2
  ON m2.value = CAST(s."zip""; --" AS TEXT)
LEFT JOIN (
  SELECT
    class[1] AS k0,
    class[2] AS k1,
    class[3] AS k2
  FROM anonsql_suppressed
  WHERE
    run_id = 3
) AS sup
  ON sup.k0 = CAST(s."age" AS TEXT)
  AND sup.k1 = m1.generalized
  AND sup.k2 = m2.generalized
WHERE
  NOT (
    NOT sup.k0 IS NULL OR m1.node IS NULL OR m2.node IS NULL
  )
