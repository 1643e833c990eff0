-- enhanced beta-likeness (Cao, Karras 2012, Definition 4): the class's largest relative
-- distance (p - q) / q, or NULL (fails for every beta) when a value's distance exceeds -ln q.
SELECT
  cs.class_id,
  CASE
    WHEN MAX((cs.c / c.vals - o.q) / o.q + LN(o.q)) > :eps THEN NULL
    ELSE MAX((cs.c / c.vals - o.q) / o.q)
  END AS value
FROM class_sensitive AS cs
JOIN classes AS c ON c.class_id = cs.class_id
JOIN overall AS o ON o.s = cs.s
GROUP BY cs.class_id
