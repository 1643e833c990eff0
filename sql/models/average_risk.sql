-- average re-identification risk (ARX's AverageReidentificationRisk): released classes over
-- released records, the same for every class (0 when nothing is released).
SELECT c.class_id, t.risk AS value
FROM classes AS c
CROSS JOIN (
  SELECT CASE WHEN SUM(x.size) > 0 THEN CAST(COUNT(*) AS DOUBLE) / SUM(x.size) ELSE 0 END AS risk
  FROM classes AS x WHERE NOT x.suppressed
) AS t
