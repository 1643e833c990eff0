WITH "__anonsql_g" AS MATERIALIZED (
  SELECT
    __anonsql_m0."node" AS n0,
    __anonsql_m1."node" AS n1,
    __anonsql_m2."node" AS n2,
    COUNT(*) AS n,
    MIN(
      CASE
        WHEN NOT __anonsql_m0."node" IS NULL
        AND NOT __anonsql_m1."node" IS NULL
        AND NOT __anonsql_m2."node" IS NULL
        THEN 1
        ELSE 0
      END
    ) AS known
  FROM "people" AS s
  LEFT JOIN (
    /* Leaf label -> its ancestor's label on one level, read off the closure table. */
    SELECT
      leaf.label AS value,
      anc.label AS generalized,
      anc.id AS node
    FROM anonsql_hierarchy_node AS leaf
    JOIN anonsql_hierarchy_closure AS c
      ON c.hierarchy = 'age@1' AND c.descendant = leaf.id AND c.distance = 2
    JOIN anonsql_hierarchy_node AS anc
      ON anc.hierarchy = 'age@1' AND anc.id = c.ancestor
    WHERE
      leaf.hierarchy = 'age@1' AND leaf.level = 0
  ) AS __anonsql_m0
    ON __anonsql_m0."value" = CAST(s."age" AS VARCHAR)
  LEFT JOIN (
    /* Leaf label -> its ancestor's label on one level, read off the closure table. */
    SELECT
      leaf.label AS value,
      anc.label AS generalized,
      anc.id AS node
    FROM anonsql_hierarchy_node AS leaf
    JOIN anonsql_hierarchy_closure AS c
      ON c.hierarchy = 'sex@2' AND c.descendant = leaf.id AND c.distance = 0
    JOIN anonsql_hierarchy_node AS anc
      ON anc.hierarchy = 'sex@2' AND anc.id = c.ancestor
    WHERE
      leaf.hierarchy = 'sex@2' AND leaf.level = 0
  ) AS __anonsql_m1
    ON __anonsql_m1."value" = CAST(s."sex" AS VARCHAR)
  LEFT JOIN (
    /* Leaf label -> its ancestor's label on one level, read off the closure table. */
    SELECT
      leaf.label AS value,
      anc.label AS generalized,
      anc.id AS node
    FROM anonsql_hierarchy_node AS leaf
    JOIN anonsql_hierarchy_closure AS c
      ON c.hierarchy = 'zip@3' AND c.descendant = leaf.id AND c.distance = 3
    JOIN anonsql_hierarchy_node AS anc
      ON anc.hierarchy = 'zip@3' AND anc.id = c.ancestor
    WHERE
      leaf.hierarchy = 'zip@3' AND leaf.level = 0
  ) AS __anonsql_m2
    ON __anonsql_m2."value" = CAST(s."zip""; --" AS VARCHAR)
  GROUP BY
    1,
    2,
    3
), "__anonsql_known" AS (
  SELECT
    g."n0" AS n0,
    g."n1" AS n1,
    g."n2" AS n2,
    g."n"
  FROM "__anonsql_g" AS g
  WHERE
    g."known" = 1
), "__anonsql_ok" AS (
  SELECT
    "n0",
    "n1",
    "n2",
    SUM("n") >= 5 AS ok
  FROM "__anonsql_known"
  GROUP BY
    "n0",
    "n1",
    "n2"
  HAVING
    SUM("n") < 5
)
SELECT
  __anonsql_mask0."token" AS "id",
  __anonsql_mask1."token" AS "email",
  CASE
    WHEN __anonsql_m0."node" IS NULL
    OR __anonsql_m1."node" IS NULL
    OR __anonsql_m2."node" IS NULL
    OR NOT COALESCE(ok."ok", TRUE)
    THEN '*'
    ELSE __anonsql_m0."generalized"
  END AS "age",
  CASE
    WHEN __anonsql_m0."node" IS NULL
    OR __anonsql_m1."node" IS NULL
    OR __anonsql_m2."node" IS NULL
    OR NOT COALESCE(ok."ok", TRUE)
    THEN '*'
    ELSE __anonsql_m1."generalized"
  END AS "sex",
  CASE
    WHEN __anonsql_m0."node" IS NULL
    OR __anonsql_m1."node" IS NULL
    OR __anonsql_m2."node" IS NULL
    OR NOT COALESCE(ok."ok", TRUE)
    THEN '*'
    ELSE __anonsql_m2."generalized"
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
    ON c.hierarchy = 'age@1' AND c.descendant = leaf.id AND c.distance = 2
  JOIN anonsql_hierarchy_node AS anc
    ON anc.hierarchy = 'age@1' AND anc.id = c.ancestor
  WHERE
    leaf.hierarchy = 'age@1' AND leaf.level = 0
) AS __anonsql_m0
  ON __anonsql_m0."value" = CAST(s."age" AS VARCHAR)
LEFT JOIN (
  /* Leaf label -> its ancestor's label on one level, read off the closure table. */
  SELECT
    leaf.label AS value,
    anc.label AS generalized,
    anc.id AS node
  FROM anonsql_hierarchy_node AS leaf
  JOIN anonsql_hierarchy_closure AS c
    ON c.hierarchy = 'sex@2' AND c.descendant = leaf.id AND c.distance = 0
  JOIN anonsql_hierarchy_node AS anc
    ON anc.hierarchy = 'sex@2' AND anc.id = c.ancestor
  WHERE
    leaf.hierarchy = 'sex@2' AND leaf.level = 0
) AS __anonsql_m1
  ON __anonsql_m1."value" = CAST(s."sex" AS VARCHAR)
LEFT JOIN (
  /* Leaf label -> its ancestor's label on one level, read off the closure table. */
  SELECT
    leaf.label AS value,
    anc.label AS generalized,
    anc.id AS node
  FROM anonsql_hierarchy_node AS leaf
  JOIN anonsql_hierarchy_closure AS c
    ON c.hierarchy = 'zip@3' AND c.descendant = leaf.id AND c.distance = 3
  JOIN anonsql_hierarchy_node AS anc
    ON anc.hierarchy = 'zip@3' AND anc.id = c.ancestor
  WHERE
    leaf.hierarchy = 'zip@3' AND leaf.level = 0
) AS __anonsql_m2
  ON __anonsql_m2."value" = CAST(s."zip""; --" AS VARCHAR)
LEFT JOIN "__anonsql_ok" AS ok
  ON ok."n0" = __anonsql_m0."node"
  AND ok."n1" = __anonsql_m1."node"
  AND ok."n2" = __anonsql_m2."node"
LEFT JOIN (
  SELECT
    "digest",
    "token"
  FROM "anonsql_masks"
  WHERE
    "output" = 'people_k5' AND "col" = 'id'
) AS __anonsql_mask0
  ON __anonsql_mask0."digest" = ENCODE(SHA256(CONVERT_TO(CAST(s."id" AS VARCHAR), 'UTF8')), 'hex')
LEFT JOIN (
  SELECT
    "digest",
    "token"
  FROM "anonsql_masks"
  WHERE
    "output" = 'people_k5' AND "col" = 'email'
) AS __anonsql_mask1
  ON __anonsql_mask1."digest" = ENCODE(SHA256(CONVERT_TO(CAST(s."email" AS VARCHAR), 'UTF8')), 'hex')
