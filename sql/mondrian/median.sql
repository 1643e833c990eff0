-- Mondrian's median cut of every part at once: the part's values of the QI it tries, in
-- order, with their rows (:counts) and the part's rows (:parts' weight). The first value at
-- which the running sum holds half the rows (2 * running >= weight) goes left with those
-- before it, unless it is the part's last value (running = weight), when the value before it
-- does, so both sides keep a value: the least of the two. The rule of the in-memory cut
-- (anonsql.algorithms.mondrian.cuts.median_cut), in whole numbers.
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
    SUM(h.n) OVER (PARTITION BY h.pid ORDER BY h.code ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS running
  FROM :counts AS h
  JOIN :parts AS p ON p.pid = h.pid
) AS r
GROUP BY r.pid
