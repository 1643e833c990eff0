-- L1 distance of seed 004 Definition 13: sum |p - q| over all sensitive values.
SELECT
  cs.class_id,
  SUM(ABS(cs.c / c.vals - o.q)) + 1 - SUM(o.q) AS value
FROM class_sensitive AS cs
JOIN classes AS c ON c.class_id = cs.class_id
JOIN overall AS o ON o.s = cs.s
GROUP BY cs.class_id
