WITH h AS (
  SELECT
    r.pid,
    CASE p.d1 WHEN 0 THEN r.c0 WHEN 1 THEN r.c1 WHEN 2 THEN r.c2 END AS code,
    SUM(r.n) AS n,
    BIT_OR(r.mask) AS mask
  FROM `__anonsql_mondrian_rows3` AS r
  JOIN `__anonsql_mondrian_parts3` AS p
    ON p.pid = r.pid
  WHERE
    (
      p.weight >= 10 AND p.ww1 > CAST('0.0' AS DOUBLE)
    )
    AND p.pid IN (
      SELECT
        t.pid
      FROM `__anonsql_mondrian_try3_0` AS t
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
        ORDER BY h.code NULLS LAST
        ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
      ) AS running
    FROM h AS h
    JOIN `__anonsql_mondrian_parts3` AS p
      ON p.pid = h.pid
  ) AS r
  GROUP BY
    r.pid
), sides AS (
  SELECT
    h.pid,
    CASE WHEN h.code <= t.thr THEN 0 ELSE 1 END AS child,
    SUM(h.n) AS n,
    BIT_OR(h.mask) AS mask
  FROM h AS h
  JOIN t AS t
    ON t.pid = h.pid
  GROUP BY
    h.pid,
    CASE WHEN h.code <= t.thr THEN 0 ELSE 1 END
), verdicts AS (
  SELECT
    k.pid,
    COALESCE(CAST(k.n AS DOUBLE) >= 5, FALSE)
    AND COALESCE(CAST(BIT_COUNT(k.mask & 14) AS DOUBLE) >= 2, FALSE) AS ok
  FROM sides AS k
)
SELECT
  t.pid,
  p.d1 AS dim,
  t.thr,
  MIN(CASE WHEN k.ok THEN 1 ELSE 0 END) = 1 AS passed
FROM t AS t
JOIN `__anonsql_mondrian_parts3` AS p
  ON p.pid = t.pid
JOIN verdicts AS k
  ON k.pid = t.pid
GROUP BY
  t.pid,
  p.d1,
  t.thr
