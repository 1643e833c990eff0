-- sample uniqueness (ARX's SampleUniqueness): released records alone in their class over
-- released records, the same for every class (0 when nothing is released).
SELECT c.class_id, t.share AS value
FROM classes AS c
CROSS JOIN (
  SELECT CASE WHEN SUM(x.size) > 0
              THEN SUM(CASE WHEN x.size = 1 THEN 1 ELSE 0 END) / SUM(x.size) ELSE 0 END AS share
  FROM classes AS x WHERE NOT x.suppressed
) AS t
