WITH "__anonsql_r" AS NOT MATERIALIZED (
  SELECT
    s."income" AS c0,
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
    COALESCE(CAST(r."c0" AS VARCHAR), 'NULL') AS s,
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
), "__anonsql_classes" AS (
  SELECT
    k.class_id,
    CAST(k.size AS DOUBLE PRECISION) AS size,
    FALSE AS suppressed,
    NULLIF(CAST(k.vals AS DOUBLE PRECISION), 0) AS vals
  FROM __anonsql_ck AS k
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
    ROW_NUMBER() OVER (
      ORDER BY CASE
        WHEN x.s ~ '^[+-]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]+)?$'
        THEN CAST(x.s AS DOUBLE PRECISION)
      END, x.s
    ) AS rnk
  FROM __anonsql_g AS x
  WHERE
    x.s <> 'NULL'
  GROUP BY
    x.s
), "__anonsql_class_ok" AS (
  SELECT
    c."class_id",
    COALESCE(v0."value" >= 5, FALSE) AND COALESCE(v1."value" <= 0.200000001, FALSE) AS ok
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
      g.class_id,
      CASE
        WHEN MAX(g.m) > 1
        THEN CAST(SUM(ABS(g.cum)) AS DOUBLE PRECISION) / (
          MAX(g.m) - 1
        )
        ELSE 0
      END AS value
    FROM (
      SELECT
        c.class_id,
        (
          SELECT
            COUNT(*)
          FROM __anonsql_overall AS overall
        ) AS m,
        SUM(CAST(COALESCE(cs.c, 0) AS DOUBLE PRECISION) / c.vals - o.q) OVER (
          PARTITION BY c.class_id
          ORDER BY o.rnk
          ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
        ) AS cum
      FROM __anonsql_classes AS c
      CROSS JOIN __anonsql_overall AS o
      LEFT JOIN __anonsql_class_sensitive AS cs
        ON cs.class_id = c.class_id AND cs.s = o.s
    ) AS g
    GROUP BY
      g.class_id
  ) AS v1
    ON v1."class_id" = c."class_id"
), "__anonsql_ok" AS (
  SELECT
    k."n0",
    k."n1",
    k."n2",
    o."ok"
  FROM "__anonsql_ck" AS k
  JOIN "__anonsql_class_ok" AS o
    ON o."class_id" = k."class_id"
  WHERE
    NOT o."ok"
)
SELECT
  CASE WHEN r."k" = 0 OR NOT COALESCE(ok."ok", TRUE) THEN '*' ELSE r."g0" END AS "age",
  CASE WHEN r."k" = 0 OR NOT COALESCE(ok."ok", TRUE) THEN '*' ELSE r."g1" END AS "sex",
  CASE WHEN r."k" = 0 OR NOT COALESCE(ok."ok", TRUE) THEN '*' ELSE r."g2" END AS "zip""; --"
FROM "__anonsql_r" AS r
LEFT JOIN "__anonsql_ok" AS ok
  ON ok."n0" = r."n0" AND ok."n1" = r."n1" AND ok."n2" = r."n2"
