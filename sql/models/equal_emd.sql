-- equal-distance EMD: 1/2 sum |p - q|; values absent from the class contribute their q,
-- i.e. 1 - (sum of q over present values).
SELECT
  cs.class_id,
  0.5 * (SUM(ABS(cs.c / c.vals - o.q)) + 1 - SUM(o.q)) AS value
FROM class_sensitive AS cs
JOIN classes AS c ON c.class_id = cs.class_id
JOIN overall AS o ON o.s = cs.s
GROUP BY cs.class_id
