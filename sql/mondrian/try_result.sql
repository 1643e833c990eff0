-- A try's verdict per part: the cut is allowable when every side satisfies every model
-- (:verdicts, one row per side); :dim is the QI the part tried.
SELECT t.pid, :dim AS dim, t.thr, MIN(CASE WHEN k.ok THEN 1 ELSE 0 END) = 1 AS passed
FROM :medians AS t
JOIN :parts AS p ON p.pid = t.pid
JOIN :verdicts AS k ON k.pid = t.pid
GROUP BY t.pid, :dim, t.thr
