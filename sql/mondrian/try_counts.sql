-- One try of Mondrian's cut in every open part: the rows per value (code) of the QI the
-- part tries (:code picks the part's QI of this try; :open keeps the parts that try it);
-- the engine module adds the per-sensitive-value counts.
SELECT r.pid, :code AS code, SUM(r.n) AS n
FROM :rows AS r
JOIN :parts AS p ON p.pid = r.pid
WHERE :open
GROUP BY r.pid, :code
