SELECT
  CASE
    WHEN NOT sup.k0 IS NULL OR m0.node IS NULL OR m2.node IS NULL
    THEN '*'
    ELSE m0.generalized
  END AS "age",
  CASE
    WHEN NOT sup.k0 IS NULL OR m0.node IS NULL OR m2.node IS NULL
    THEN '*'
    ELSE CAST(s."sex" AS VARCHAR)
  END AS "sex",
  CASE
    WHEN NOT sup.k0 IS NULL OR m0.node IS NULL OR m2.node IS NULL
    THEN '*'
    ELSE m2.generalized
  END AS "zip""; --"
FROM "people" AS s
LEFT JOIN (
  /* Leaf label -> its ancestor's label on one level, read off the closure table. */
  SELECT
    leaf.label AS value,
    anc.label AS generalized,
    anc.id AS node
  FROM anonsql_hierarchy_node AS leaf
  JOIN anonsql_hierarchy_closure AS c
    ON c.hierarchy = 'age' AND c.descendant = leaf.id AND c.distance = 2
  JOIN anonsql_hierarchy_node AS anc
    ON anc.hierarchy = 'age' AND anc.id = c.ancestor
  WHERE
    leaf.hierarchy = 'age' AND leaf.level = 0
) AS m0
  ON m0.value = CAST(s."age" AS VARCHAR)
LEFT JOIN (
  /* Leaf label -> its ancestor's label on one level, read off the closure table. */
  SELECT
    leaf.label AS value,
    anc.label AS generalized,
    anc.id AS node
  FROM anonsql_hierarchy_node AS leaf
  JOIN anonsql_hierarchy_closure AS c
    ON c.hierarchy = 'zip"; --' AND c.descendant = leaf.id AND c.distance = 3
  JOIN anonsql_hierarchy_node AS anc
    ON anc.hierarchy = 'zip"; --' AND anc.id = c.ancestor
  WHERE
    leaf.hierarchy = 'zip"; --' AND leaf.level = 0
) AS m2
  ON m2.value = CAST(s."zip""; --" AS VARCHAR)
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
  AND sup.k1 = CAST(s."sex" AS VARCHAR)
  AND sup.k2 = m2.generalized
