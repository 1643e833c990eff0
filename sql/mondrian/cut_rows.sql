-- The next depth's rows: every row of a cut part, in the child its value of the cut QI
-- (:code) falls in; the engine module adds the codes and counts it carries along.
SELECT 2 * c.seq + CASE WHEN :code <= c.thr THEN 0 ELSE 1 END AS pid
FROM :rows AS r
JOIN :cuts AS c ON c.pid = r.pid
