-- The two sides of every tried cut, as the classes the privacy models test: the values up
-- to the median go left (child 0), the others right (child 1); the engine module adds the
-- per-sensitive-value counts.
SELECT h.pid, CASE WHEN h.code <= t.thr THEN 0 ELSE 1 END AS child, SUM(h.n) AS n
FROM :counts AS h
JOIN :medians AS t ON t.pid = h.pid
GROUP BY h.pid, CASE WHEN h.code <= t.thr THEN 0 ELSE 1 END
