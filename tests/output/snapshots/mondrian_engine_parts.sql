SELECT
  y.pid,
  y.weight,
  CASE WHEN y.k0 = 0 THEN 0 WHEN y.k1 = 0 THEN 1 WHEN y.k2 = 0 THEN 2 END AS d0,
  CASE WHEN y.k0 = 0 THEN y.w0 WHEN y.k1 = 0 THEN y.w1 WHEN y.k2 = 0 THEN y.w2 END AS ww0,
  CASE WHEN y.k0 = 1 THEN 0 WHEN y.k1 = 1 THEN 1 WHEN y.k2 = 1 THEN 2 END AS d1,
  CASE WHEN y.k0 = 1 THEN y.w0 WHEN y.k1 = 1 THEN y.w1 WHEN y.k2 = 1 THEN y.w2 END AS ww1,
  CASE WHEN y.k0 = 2 THEN 0 WHEN y.k1 = 2 THEN 1 WHEN y.k2 = 2 THEN 2 END AS d2,
  CASE WHEN y.k0 = 2 THEN y.w0 WHEN y.k1 = 2 THEN y.w1 WHEN y.k2 = 2 THEN y.w2 END AS ww2
FROM (
  SELECT
    x.pid,
    x.weight,
    x.w0,
    0 + CASE WHEN x.w1 > x.w0 THEN 1 ELSE 0 END + CASE WHEN x.w2 > x.w0 THEN 1 ELSE 0 END AS k0,
    x.w1,
    0 + CASE WHEN x.w0 >= x.w1 THEN 1 ELSE 0 END + CASE WHEN x.w2 > x.w1 THEN 1 ELSE 0 END AS k1,
    x.w2,
    0 + CASE WHEN x.w0 >= x.w2 THEN 1 ELSE 0 END + CASE WHEN x.w1 >= x.w2 THEN 1 ELSE 0 END AS k2
  FROM (
    SELECT
      s.pid,
      s.weight,
      (
        hi0_x.x - lo0_x.x
      ) / CAST('39.0' AS DOUBLE) AS w0,
      CAST(BIT_COUNT(s.nd1) - 1 AS DOUBLE) / CAST('1.0' AS DOUBLE) AS w1,
      CAST(s.nd2 - 1 AS DOUBLE) / CAST('99.0' AS DOUBLE) AS w2
    FROM (
      SELECT
        r.pid,
        SUM(r.n) AS weight,
        MIN(r.c0) AS lo0,
        MAX(r.c0) AS hi0,
        BIT_OR(CAST(1 AS BIGINT) << CAST(r.c1 AS INT)) AS nd1,
        COUNT(DISTINCT r.c2) AS nd2
      FROM "__anonsql_mondrian_rows3" AS r
      GROUP BY
        r.pid
    ) AS s
    JOIN "__anonsql_mondrian_dom0" AS lo0_x
      ON lo0_x.code = s.lo0
    JOIN "__anonsql_mondrian_dom0" AS hi0_x
      ON hi0_x.code = s.hi0
  ) AS x
) AS y
