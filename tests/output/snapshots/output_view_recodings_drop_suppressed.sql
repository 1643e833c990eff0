WITH "__anonsql_r" AS NOT MATERIALIZED (
  SELECT
    s."income" AS c0,
    __anonsql_rec."n0" AS n0,
    __anonsql_rec."n1" AS n1,
    __anonsql_rec."n2" AS n2,
    __anonsql_rec."g0" AS g0,
    __anonsql_rec."g1" AS g1,
    __anonsql_rec."g2" AS g2,
    CASE
      WHEN NOT __anonsql_rec."n0" IS NULL
      AND NOT __anonsql_rec."n1" IS NULL
      AND NOT __anonsql_rec."n2" IS NULL
      THEN 1
      ELSE 0
    END AS k
  FROM "people" AS s
  LEFT JOIN (
    SELECT
      original[1] AS o0,
      original[2] AS o1,
      original[3] AS o2,
      generalized[1] AS g0,
      generalized[2] AS g1,
      generalized[3] AS g2,
      nodes[1] AS n0,
      nodes[2] AS n1,
      nodes[3] AS n2
    FROM anonsql_recodings
    WHERE
      output = 'people_gaa'
  ) AS __anonsql_rec
    ON __anonsql_rec."o0" = CAST(s."age" AS TEXT)
    AND __anonsql_rec."o1" = CAST(s."sex" AS TEXT)
    AND __anonsql_rec."o2" = CAST(s."zip""; --" AS TEXT)
), "__anonsql_g" AS (
  SELECT
    r."n0" AS n0,
    r."n1" AS n1,
    r."n2" AS n2,
    COALESCE(CAST(r."c0" AS TEXT), 'NULL') AS s,
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
    ON x.n0 = k.n0 AND x.n1 = k.n1 AND x.n2 = k.n2
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
    COALESCE(v0."value" >= 3, FALSE)
    AND COALESCE(LN(v1."value") >= 0.40546510710816436, FALSE) AS ok
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
      EXP(-SUM((
        cs.c / c.vals
      ) * LN(cs.c / c.vals))) AS value
    FROM __anonsql_class_sensitive AS cs
    JOIN __anonsql_classes AS c
      ON c.class_id = cs.class_id
    GROUP BY
      cs.class_id
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
  r."g0" AS "age",
  r."g1" AS "sex",
  r."g2" AS "zip""; --"
FROM "__anonsql_r" AS r
LEFT JOIN "__anonsql_ok" AS ok
  ON ok."n0" = r."n0" AND ok."n1" = r."n1" AND ok."n2" = r."n2"
WHERE
  NOT (
    r."k" = 0 OR NOT COALESCE(ok."ok", TRUE)
  )
