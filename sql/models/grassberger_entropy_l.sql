-- entropy l-diversity with Grassberger's estimator (ARX's EntropyEstimator.GRASSBERGER):
-- H_G = G(N) - sum n G(n) / N, value = min(exp(H_G), distinct values). G(n) = G(2 floor(n/2)):
-- from :g_even (h, G_2h) up to :exact_up_to, else ln(2h) + m (s1 - m (s2 - m s3)), m = 1/h^2.
SELECT
  t.class_id,
  LEAST(EXP(MAX(t.g_n) - SUM(t.c * t.g_c) / MAX(t.vals)), CAST(COUNT(*) AS DOUBLE)) AS value
FROM (
  SELECT
    cs.class_id,
    cs.c,
    c.vals,
    CASE
      WHEN cs.c <= :exact_up_to THEN CAST(gc.g AS DOUBLE)
      ELSE LN(2 * FLOOR(cs.c / 2)) + (1 / (FLOOR(cs.c / 2) * FLOOR(cs.c / 2))) * (
        :s1 - (1 / (FLOOR(cs.c / 2) * FLOOR(cs.c / 2))) * (
          :s2 - (1 / (FLOOR(cs.c / 2) * FLOOR(cs.c / 2))) * :s3
        )
      )
    END AS g_c,
    CASE
      WHEN c.vals <= :exact_up_to THEN CAST(gn.g AS DOUBLE)
      ELSE LN(2 * FLOOR(c.vals / 2)) + (1 / (FLOOR(c.vals / 2) * FLOOR(c.vals / 2))) * (
        :s1 - (1 / (FLOOR(c.vals / 2) * FLOOR(c.vals / 2))) * (
          :s2 - (1 / (FLOOR(c.vals / 2) * FLOOR(c.vals / 2))) * :s3
        )
      )
    END AS g_n
  FROM class_sensitive AS cs
  JOIN classes AS c ON c.class_id = cs.class_id
  LEFT JOIN :g_even AS gc ON gc.h = FLOOR(cs.c / 2)
  LEFT JOIN :g_even AS gn ON gn.h = FLOOR(c.vals / 2)
) AS t
GROUP BY t.class_id
