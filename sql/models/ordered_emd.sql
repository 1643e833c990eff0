-- ordered-distance EMD: sum of |cumulative (p - q)| along the value order, over (m - 1).
SELECT
  g.class_id,
  CASE WHEN MAX(g.m) > 1 THEN SUM(ABS(g.cum)) / (MAX(g.m) - 1) ELSE 0 END AS value
FROM (
  SELECT
    c.class_id,
    (SELECT COUNT(*) FROM overall) AS m,
    SUM(COALESCE(cs.c, 0) / c.vals - o.q) OVER (
      PARTITION BY c.class_id ORDER BY o.rnk ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
    ) AS cum
  FROM classes AS c
  CROSS JOIN overall AS o
  LEFT JOIN class_sensitive AS cs ON cs.class_id = c.class_id AND cs.s = o.s
) AS g
GROUP BY g.class_id
