CREATE OR REPLACE TABLE "people_k5" AS
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
      m.hierarchy = 'age@1' AND m.level = 1
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
      m.hierarchy = 'sex@2' AND m.level = 1
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
      m.hierarchy = 'zip@3' AND m.level = 0
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
    COALESCE(CAST(r."c0" AS TEXT), 'NULL') AS s,
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
  LEFT JOIN (
    SELECT
      "label"
    FROM "anonsql_hierarchy_node"
    WHERE
      "hierarchy" = 'income@4' AND "level" = 0
  ) AS __anonsql_sl
    ON __anonsql_sl."label" = g."s"
  WHERE
    g."known" = 1 AND NOT __anonsql_sl."label" IS NULL
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
    CAST(k.size AS DOUBLE) AS size,
    FALSE AS suppressed,
    NULLIF(CAST(k.vals AS DOUBLE), 0) AS vals
  FROM __anonsql_ck AS k
), "__anonsql_class_sensitive" AS (
  SELECT
    k.class_id,
    x.s,
    CAST(x.c AS DOUBLE) AS c
  FROM __anonsql_cs AS x
  JOIN __anonsql_ck AS k
    ON x.nk = k.nk
  WHERE
    x.s <> 'NULL'
), "__anonsql_overall" AS (
  SELECT
    x.s,
    CAST(SUM(x.n) AS DOUBLE) / (
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
    COALESCE(v0."value" >= 5, FALSE)
    AND COALESCE(v1."value" >= 2, FALSE)
    AND COALESCE(v2."value" <= 0.300000001, FALSE) AS ok
  FROM __anonsql_classes AS c
  LEFT JOIN (
    SELECT
      c.class_id,
      CAST(c.size AS DOUBLE) AS value
    FROM __anonsql_classes AS c
  ) AS v0
    ON v0."class_id" = c."class_id"
  LEFT JOIN (
    SELECT
      cs.class_id,
      CAST(COUNT(*) AS DOUBLE) AS value
    FROM __anonsql_class_sensitive AS cs
    GROUP BY
      cs.class_id
  ) AS v1
    ON v1."class_id" = c."class_id"
  LEFT JOIN (
    WITH leaf_extra AS (
      SELECT
        c.class_id,
        n.id AS node,
        COALESCE(cs.c, 0) / c.vals - o.q AS extra
      FROM __anonsql_classes AS c
      CROSS JOIN __anonsql_overall AS o
      JOIN anonsql_hierarchy_node AS n
        ON n.hierarchy = 'income@4' AND n.level = 0 AND n.label = o.s
      LEFT JOIN __anonsql_class_sensitive AS cs
        ON cs.class_id = c.class_id AND cs.s = o.s
    ), node_extra AS (
      SELECT
        le.class_id,
        cl.ancestor AS node,
        SUM(le.extra) AS extra
      FROM leaf_extra AS le
      JOIN anonsql_hierarchy_closure AS cl
        ON cl.hierarchy = 'income@4' AND cl.descendant = le.node
      GROUP BY
        le.class_id,
        cl.ancestor
    ), per_parent AS (
      SELECT
        ne.class_id,
        n.parent,
        SUM(GREATEST(ne.extra, 0)) AS pos,
        SUM(GREATEST(-ne.extra, 0)) AS neg
      FROM node_extra AS ne
      JOIN anonsql_hierarchy_node AS n
        ON n.hierarchy = 'income@4' AND n.id = ne.node
      WHERE
        NOT n.parent IS NULL
      GROUP BY
        ne.class_id,
        n.parent
    )
    SELECT
      pp.class_id,
      SUM(CAST(p.level AS DOUBLE) / 2 * LEAST(pp.pos, pp.neg)) AS value
    FROM per_parent AS pp
    JOIN anonsql_hierarchy_node AS p
      ON p.hierarchy = 'income@4' AND p.id = pp.parent
    GROUP BY
      pp.class_id
  ) AS v2
    ON v2."class_id" = c."class_id"
), "__anonsql_ok" AS (
  SELECT
    k."nk",
    o."ok"
  FROM "__anonsql_ck" AS k
  JOIN "__anonsql_class_ok" AS o
    ON o."class_id" = k."class_id"
)
SELECT
  CASE
    WHEN NOT COALESCE(ok."ok", FALSE) OR __anonsql_rsl."label" IS NULL
    THEN '*'
    ELSE r."g0"
  END AS "age",
  CASE
    WHEN NOT COALESCE(ok."ok", FALSE) OR __anonsql_rsl."label" IS NULL
    THEN '*'
    ELSE r."g1"
  END AS "sex",
  CASE
    WHEN NOT COALESCE(ok."ok", FALSE) OR __anonsql_rsl."label" IS NULL
    THEN '*'
    ELSE r."g2"
  END AS "zip""; --",
  r."c0" AS "income"
FROM "__anonsql_r" AS r
LEFT JOIN "__anonsql_ok" AS ok
  ON ok."nk" = r."nk"
LEFT JOIN (
  SELECT
    "label"
  FROM "anonsql_hierarchy_node"
  WHERE
    "hierarchy" = 'income@4' AND "level" = 0
) AS __anonsql_rsl
  ON __anonsql_rsl."label" = COALESCE(CAST(r."c0" AS TEXT), 'NULL')
