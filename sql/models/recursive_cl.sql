-- recursive (c,l)-diversity: r1 / (r_l + ... + r_m); NULL when the class has fewer than l values.
SELECT
  r.class_id,
  MAX(r.c) / NULLIF(SUM(CASE WHEN r.rk >= :l THEN r.c ELSE 0 END), 0) AS value
FROM (
  SELECT cs.class_id, CAST(cs.c AS DOUBLE) AS c,
    ROW_NUMBER() OVER (PARTITION BY cs.class_id ORDER BY cs.c DESC) AS rk
  FROM class_sensitive AS cs
) AS r
GROUP BY r.class_id
