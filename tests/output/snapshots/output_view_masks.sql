WITH "__anonsql_r" AS NOT MATERIALIZED (
  SELECT
    s."id" AS c0,
    s."name" AS c1,
    s."email" AS c2,
    s."phone" AS c3,
    __anonsql_m0."node" AS n0,
    __anonsql_m1."node" AS n1,
    __anonsql_m2."node" AS n2,
    __anonsql_m0."generalized" AS g0,
    __anonsql_m1."generalized" AS g1,
    __anonsql_m2."generalized" AS g2,
    CASE
      WHEN NOT __anonsql_m0."node" IS NULL
      AND NOT __anonsql_m1."node" IS NULL
      AND NOT __anonsql_m2."node" IS NULL
      THEN 1
      ELSE 0
    END AS k
  FROM "people" AS s
  LEFT JOIN (
    SELECT
      m.value,
      MIN(m.generalized) AS generalized,
      MIN(m.node) AS node
    FROM anonsql_hierarchy_map AS m
    WHERE
      m.hierarchy = 'age@1' AND m.level = 2
    GROUP BY
      m.value
    HAVING
      MIN(m.generalized) = MAX(m.generalized) AND MIN(m.node) = MAX(m.node)
  ) AS __anonsql_m0
    ON __anonsql_m0."value" = CAST(s."age" AS TEXT)
  LEFT JOIN (
    SELECT
      m.value,
      MIN(m.generalized) AS generalized,
      MIN(m.node) AS node
    FROM anonsql_hierarchy_map AS m
    WHERE
      m.hierarchy = 'sex@2' AND m.level = 0
    GROUP BY
      m.value
    HAVING
      MIN(m.generalized) = MAX(m.generalized) AND MIN(m.node) = MAX(m.node)
  ) AS __anonsql_m1
    ON __anonsql_m1."value" = CAST(s."sex" AS TEXT)
  LEFT JOIN (
    SELECT
      m.value,
      MIN(m.generalized) AS generalized,
      MIN(m.node) AS node
    FROM anonsql_hierarchy_map AS m
    WHERE
      m.hierarchy = 'zip@3' AND m.level = 3
    GROUP BY
      m.value
    HAVING
      MIN(m.generalized) = MAX(m.generalized) AND MIN(m.node) = MAX(m.node)
  ) AS __anonsql_m2
    ON __anonsql_m2."value" = CAST(s."zip""; --" AS TEXT)
), "__anonsql_g" AS (
  SELECT
    r."n0" AS n0,
    r."n1" AS n1,
    r."n2" AS n2,
    COUNT(*) AS n,
    MIN(r."k") AS known
  FROM "__anonsql_r" AS r
  GROUP BY
    1,
    2,
    3
), "__anonsql_ok" AS (
  SELECT
    g."n0" AS n0,
    g."n1" AS n1,
    g."n2" AS n2,
    g."n" >= 5 AS ok
  FROM "__anonsql_g" AS g
  WHERE
    g."known" = 1 AND g."n" < 5
)
SELECT
  __anonsql_mask0."token" AS "id",
  CASE
    WHEN LENGTH(CAST(r."c1" AS TEXT)) > 1
    THEN LEFT(CAST(r."c1" AS TEXT), 1) || REPEAT('*', LENGTH(CAST(r."c1" AS TEXT)) - 1)
    ELSE REPEAT('*', LENGTH(CAST(r."c1" AS TEXT)))
  END AS "name",
  CASE
    WHEN STRPOS(CAST(r."c2" AS TEXT), '@') > 0
    THEN REVERSE(
      SUBSTRING(REVERSE(CAST(r."c2" AS TEXT)), 1, STRPOS(REVERSE(CAST(r."c2" AS TEXT)), '@') - 1)
    )
    ELSE CAST(NULL AS TEXT)
  END AS "email",
  CAST(NULL AS TEXT) AS "phone",
  CASE WHEN r."k" = 0 OR NOT COALESCE(ok."ok", TRUE) THEN '*' ELSE r."g0" END AS "age",
  CASE WHEN r."k" = 0 OR NOT COALESCE(ok."ok", TRUE) THEN '*' ELSE r."g1" END AS "sex",
  CASE WHEN r."k" = 0 OR NOT COALESCE(ok."ok", TRUE) THEN '*' ELSE r."g2" END AS "zip""; --"
FROM "__anonsql_r" AS r
LEFT JOIN "__anonsql_ok" AS ok
  ON ok."n0" = r."n0" AND ok."n1" = r."n1" AND ok."n2" = r."n2"
LEFT JOIN (
  SELECT
    "value",
    "token"
  FROM "anonsql_masks"
  WHERE
    "output" = 'people_k5' AND "col" = 'id'
) AS __anonsql_mask0
  ON __anonsql_mask0."value" = CAST(r."c0" AS TEXT)
