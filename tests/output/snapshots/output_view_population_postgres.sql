WITH "__anonsql_r" AS NOT MATERIALIZED (
  SELECT
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
    ON __anonsql_m0."value" = CAST(s."age" AS VARCHAR)
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
    ON __anonsql_m1."value" = CAST(s."sex" AS VARCHAR)
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
    ON __anonsql_m2."value" = CAST(s."zip""; --" AS VARCHAR)
), "__anonsql_g" AS MATERIALIZED (
  SELECT
    r."n0" AS n0,
    r."n1" AS n1,
    r."n2" AS n2,
    'NULL' AS s,
    COUNT(*) AS n,
    MIN(r."k") AS known
  FROM "__anonsql_r" AS r
  GROUP BY
    1,
    2,
    3,
    4
), "__anonsql_known" AS (
  SELECT
    g."n0" AS n0,
    g."n1" AS n1,
    g."n2" AS n2,
    g."s",
    g."n"
  FROM "__anonsql_g" AS g
  WHERE
    g."known" = 1
), "__anonsql_cs" AS (
  SELECT
    "n0",
    "n1",
    "n2",
    "s",
    "n" AS c
  FROM "__anonsql_known"
), "__anonsql_ck" AS (
  SELECT
    "n0",
    "n1",
    "n2",
    ROW_NUMBER() OVER (ORDER BY "n0", "n1", "n2") AS class_id,
    SUM("c") AS size,
    SUM(CASE WHEN "s" <> 'NULL' THEN "c" ELSE 0 END) AS vals
  FROM "__anonsql_cs"
  GROUP BY
    "n0",
    "n1",
    "n2"
), "__anonsql_pop" AS (
  SELECT
    __anonsql_m0."node" AS n0,
    __anonsql_m1."node" AS n1,
    __anonsql_m2."node" AS n2,
    COUNT(*) AS pn,
    MIN(
      CASE
        WHEN NOT __anonsql_m0."node" IS NULL
        AND NOT __anonsql_m1."node" IS NULL
        AND NOT __anonsql_m2."node" IS NULL
        THEN 1
        ELSE 0
      END
    ) AS known
  FROM "census" AS pr
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
    ON __anonsql_m0."value" = CAST(pr."age" AS VARCHAR)
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
    ON __anonsql_m1."value" = CAST(pr."sex" AS VARCHAR)
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
    ON __anonsql_m2."value" = CAST(pr."zip""; --" AS VARCHAR)
  GROUP BY
    1,
    2,
    3
), "__anonsql_classes" AS (
  SELECT
    k.class_id,
    CAST(k.size AS DOUBLE PRECISION) AS size,
    FALSE AS suppressed,
    NULLIF(CAST(k.vals AS DOUBLE PRECISION), 0) AS vals,
    CAST(COALESCE(p.pn, 0) AS DOUBLE PRECISION) AS population
  FROM __anonsql_ck AS k
  LEFT JOIN __anonsql_pop AS p
    ON p.n0 = k.n0 AND p.n1 = k.n1 AND p.n2 = k.n2
), "__anonsql_class_sensitive" AS (
  SELECT
    k.class_id,
    x.s,
    CAST(x.c AS DOUBLE PRECISION) AS c
  FROM __anonsql_cs AS x
  JOIN __anonsql_ck AS k
    ON x.n0 = k.n0 AND x.n1 = k.n1 AND x.n2 = k.n2
  WHERE
    x.s <> 'NULL'
), "__anonsql_overall" AS (
  SELECT
    x.s,
    CAST(SUM(x.n) AS DOUBLE PRECISION) / (
      SELECT
        SUM(y.n)
      FROM __anonsql_g AS y
      WHERE
        y.s <> 'NULL'
    ) AS q,
    ROW_NUMBER() OVER (ORDER BY x.s) AS rnk
  FROM __anonsql_g AS x
  WHERE
    x.s <> 'NULL'
  GROUP BY
    x.s
), "__anonsql_class_ok" AS (
  SELECT
    c."class_id",
    COALESCE(v0."value" >= 2, FALSE)
    AND COALESCE(v1."value" >= 0.049999999 AND v1."value" <= 0.500000001, FALSE)
    AND COALESCE(v2."value" >= 3, FALSE) AS ok
  FROM __anonsql_classes AS c
  LEFT JOIN (
    SELECT
      c.class_id,
      CAST(c.size AS DOUBLE PRECISION) AS value
    FROM __anonsql_classes AS c
  ) AS v0
    ON v0."class_id" = c."class_id"
  LEFT JOIN (
    SELECT
      c.class_id,
      CASE WHEN c.population > 0 THEN CAST(c.size AS DOUBLE PRECISION) / c.population END AS value
    FROM __anonsql_classes AS c
  ) AS v1
    ON v1."class_id" = c."class_id"
  LEFT JOIN (
    SELECT
      c.class_id,
      CAST(c.population AS DOUBLE PRECISION) AS value
    FROM __anonsql_classes AS c
  ) AS v2
    ON v2."class_id" = c."class_id"
), "__anonsql_unreleased" AS (
  SELECT
    COUNT(*) AS u
  FROM __anonsql_pop AS p
  LEFT JOIN __anonsql_ck AS k
    ON k.n0 = p.n0 AND k.n1 = p.n1 AND k.n2 = p.n2
  WHERE
    p.known = 1 AND k.class_id IS NULL
), "__anonsql_ok" AS (
  SELECT
    k."n0",
    k."n1",
    k."n2",
    o."ok" AND u."u" = 0 AS ok
  FROM "__anonsql_ck" AS k
  JOIN "__anonsql_class_ok" AS o
    ON o."class_id" = k."class_id"
  CROSS JOIN "__anonsql_unreleased" AS u
  WHERE
    NOT (
      o."ok" AND u."u" = 0
    )
)
SELECT
  CASE WHEN r."k" = 0 OR NOT COALESCE(ok."ok", TRUE) THEN '*' ELSE r."g0" END AS "age",
  CASE WHEN r."k" = 0 OR NOT COALESCE(ok."ok", TRUE) THEN '*' ELSE r."g1" END AS "sex",
  CASE WHEN r."k" = 0 OR NOT COALESCE(ok."ok", TRUE) THEN '*' ELSE r."g2" END AS "zip""; --"
FROM "__anonsql_r" AS r
LEFT JOIN "__anonsql_ok" AS ok
  ON ok."n0" = r."n0" AND ok."n1" = r."n1" AND ok."n2" = r."n2"
