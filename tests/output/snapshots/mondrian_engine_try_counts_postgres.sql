WITH h AS (
  SELECT
    r.pid,
    CASE p.d1 WHEN 0 THEN r.c0 WHEN 1 THEN r.c1 WHEN 2 THEN r.c2 END AS code,
    SUM(r.n) AS n,
    SUM(r.s0) AS s0,
    SUM(r.s1) AS s1,
    SUM(r.s2) AS s2,
    SUM(r.s3) AS s3
  FROM "__anonsql_mondrian_rows3" AS r
  JOIN "__anonsql_mondrian_parts3" AS p
    ON p.pid = r.pid
  WHERE
    (
      p.weight >= 10 AND p.ww1 > CAST('0.0' AS DOUBLE PRECISION)
    )
    AND p.pid IN (
      SELECT
        t.pid
      FROM "__anonsql_mondrian_try3_0" AS t
      WHERE
        NOT t.passed
    )
  GROUP BY
    r.pid,
    CASE p.d1 WHEN 0 THEN r.c0 WHEN 1 THEN r.c1 WHEN 2 THEN r.c2 END
), t AS (
  SELECT
    r.pid,
    LEAST(
      MIN(CASE WHEN 2 * r.running >= r.weight THEN r.code END),
      MAX(CASE WHEN r.running < r.weight THEN r.code END)
    ) AS thr
  FROM (
    SELECT
      h.pid,
      h.code,
      p.weight,
      SUM(h.n) OVER (
        PARTITION BY h.pid
        ORDER BY h.code
        ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
      ) AS running
    FROM h AS h
    JOIN "__anonsql_mondrian_parts3" AS p
      ON p.pid = h.pid
  ) AS r
  GROUP BY
    r.pid
), sides AS (
  SELECT
    h.pid,
    CASE WHEN h.code <= t.thr THEN 0 ELSE 1 END AS child,
    SUM(h.n) AS n,
    SUM(h.s0) AS s0,
    SUM(h.s1) AS s1,
    SUM(h.s2) AS s2,
    SUM(h.s3) AS s3
  FROM h AS h
  JOIN t AS t
    ON t.pid = h.pid
  GROUP BY
    h.pid,
    CASE WHEN h.code <= t.thr THEN 0 ELSE 1 END
), classes AS (
  SELECT
    2 * k.pid + k.child AS class_id,
    k.pid,
    CAST(k.n AS DOUBLE PRECISION) AS size,
    FALSE AS suppressed,
    NULLIF(CAST(k.s1 + k.s2 + k.s3 AS DOUBLE PRECISION), 0) AS vals
  FROM sides AS k
), class_sensitive AS (
  SELECT
    2 * k.pid + k.child AS class_id,
    l.v AS s,
    CAST(CASE l.code WHEN 0 THEN k.s0 WHEN 1 THEN k.s1 WHEN 2 THEN k.s2 WHEN 3 THEN k.s3 END AS DOUBLE PRECISION) AS c
  FROM sides AS k
  CROSS JOIN "__anonsql_mondrian_sens" AS l
  WHERE
    CASE l.code WHEN 0 THEN k.s0 WHEN 1 THEN k.s1 WHEN 2 THEN k.s2 WHEN 3 THEN k.s3 END > 0
    AND l.v <> 'NULL'
), overall AS (
  SELECT
    *
  FROM "__anonsql_mondrian_overall"
), verdicts AS (
  SELECT
    c.pid,
    COALESCE(v0.value >= 5, FALSE)
    AND COALESCE(LN(v1.value) >= 0.40546510710816436, FALSE)
    AND COALESCE(v2.value <= 0.300000001, FALSE) AS ok
  FROM classes AS c
  LEFT JOIN (
    SELECT
      c.class_id,
      CAST(c.size AS DOUBLE PRECISION) AS value
    FROM classes AS c
  ) AS v0
    ON v0.class_id = c.class_id
  LEFT JOIN (
    SELECT
      cs.class_id,
      EXP(
        -SUM(
          (
            CAST(cs.c AS DOUBLE PRECISION) / c.vals
          ) * LN(CAST(cs.c AS DOUBLE PRECISION) / c.vals)
        )
      ) AS value
    FROM class_sensitive AS cs
    JOIN classes AS c
      ON c.class_id = cs.class_id
    GROUP BY
      cs.class_id
  ) AS v1
    ON v1.class_id = c.class_id
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
          FROM overall
        ) AS m,
        SUM(CAST(COALESCE(cs.c, 0) AS DOUBLE PRECISION) / c.vals - o.q) OVER (
          PARTITION BY c.class_id
          ORDER BY o.rnk
          ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
        ) AS cum
      FROM classes AS c
      CROSS JOIN overall AS o
      LEFT JOIN class_sensitive AS cs
        ON cs.class_id = c.class_id AND cs.s = o.s
    ) AS g
    GROUP BY
      g.class_id
  ) AS v2
    ON v2.class_id = c.class_id
)
SELECT
  t.pid,
  p.d1 AS dim,
  t.thr,
  MIN(CASE WHEN k.ok THEN 1 ELSE 0 END) = 1 AS passed
FROM t AS t
JOIN "__anonsql_mondrian_parts3" AS p
  ON p.pid = t.pid
JOIN verdicts AS k
  ON k.pid = t.pid
GROUP BY
  t.pid,
  p.d1,
  t.thr
