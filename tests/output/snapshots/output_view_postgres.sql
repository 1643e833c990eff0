WITH "__anonsql_r" AS NOT MATERIALIZED (
  SELECT
    s."income" AS c0,
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
    ON __anonsql_m0."value" = CAST(s."age" AS VARCHAR)
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
    ON __anonsql_m1."value" = CAST(s."sex" AS VARCHAR)
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
    ON __anonsql_m2."value" = CAST(s."zip""; --" AS VARCHAR)
    AND __anonsql_m2."node" BETWEEN 0 AND 999
), "__anonsql_g" AS MATERIALIZED (
  SELECT
    r."nk" AS nk,
    COALESCE(CAST(r."c0" AS VARCHAR), 'NULL') AS s,
    COUNT(*) AS n,
    MIN(CASE WHEN r."nk" IS NULL THEN 0 ELSE 1 END) AS known
  FROM "__anonsql_r" AS r
  GROUP BY
    1,
    2
), "__anonsql_known" AS (
  SELECT
    g."nk" AS nk,
    g."s",
    g."n"
  FROM "__anonsql_g" AS g
  WHERE
    g."known" = 1
), "__anonsql_cs" AS (
  SELECT
    "nk",
    "s",
    "n" AS c
  FROM "__anonsql_known"
), "__anonsql_ck" AS (
  SELECT
    "nk",
    ROW_NUMBER() OVER (ORDER BY "nk") AS class_id,
    SUM("c") AS size,
    SUM(CASE WHEN "s" <> 'NULL' THEN "c" ELSE 0 END) AS vals
  FROM "__anonsql_cs"
  GROUP BY
    "nk"
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
    ON x.nk = k.nk
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
    k."nk",
    o."ok"
  FROM "__anonsql_ck" AS k
  JOIN "__anonsql_class_ok" AS o
    ON o."class_id" = k."class_id"
  WHERE
    NOT o."ok"
)
SELECT
  CASE WHEN r."nk" IS NULL OR NOT COALESCE(ok."ok", TRUE) THEN '*' ELSE r."g0" END AS "age",
  CASE WHEN r."nk" IS NULL OR NOT COALESCE(ok."ok", TRUE) THEN '*' ELSE r."g1" END AS "sex",
  CASE WHEN r."nk" IS NULL OR NOT COALESCE(ok."ok", TRUE) THEN '*' ELSE r."g2" END AS "zip""; --"
FROM "__anonsql_r" AS r
LEFT JOIN "__anonsql_ok" AS ok
  ON ok."nk" = r."nk"
