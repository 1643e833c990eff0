CREATE OR REPLACE VIEW "people_k5" AS
WITH "__anonsql_r" AS NOT MATERIALIZED (
  SELECT
    s."id" AS c0,
    (
      CAST(__anonsql_m0."node" AS BIGINT) * 3 + __anonsql_m1."node"
    ) * 1000 + __anonsql_m2."node" AS nk,
    __anonsql_m0."generalized" AS g0,
    __anonsql_m1."generalized" AS g1,
    __anonsql_m2."generalized" AS g2
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
    AND __anonsql_m0."node" BETWEEN 0 AND 99
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
    AND __anonsql_m1."node" BETWEEN 0 AND 2
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
    AND __anonsql_m2."node" BETWEEN 0 AND 999
), "__anonsql_g" AS (
  SELECT
    r."nk" AS nk,
    COUNT(*) AS n,
    MIN(CASE WHEN r."nk" IS NULL THEN 0 ELSE 1 END) AS known
  FROM "__anonsql_r" AS r
  GROUP BY
    1
), "__anonsql_ok" AS (
  SELECT
    g."nk" AS nk,
    g."n" >= 5 AS ok
  FROM "__anonsql_g" AS g
  WHERE
    g."known" = 1 AND g."n" < 5
)
SELECT
  r."c0" AS "id",
  CASE WHEN r."nk" IS NULL OR NOT COALESCE(ok."ok", TRUE) THEN '*' ELSE r."g0" END AS "age",
  CASE WHEN r."nk" IS NULL OR NOT COALESCE(ok."ok", TRUE) THEN '*' ELSE r."g1" END AS "sex",
  CASE WHEN r."nk" IS NULL OR NOT COALESCE(ok."ok", TRUE) THEN '*' ELSE r."g2" END AS "zip""; --"
FROM "__anonsql_r" AS r
LEFT JOIN "__anonsql_ok" AS ok
  ON ok."nk" = r."nk"
