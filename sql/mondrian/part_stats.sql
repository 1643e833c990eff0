-- The parts of one depth of Mondrian (LeFevre, DeWitt, Ramakrishnan 2006), all at once:
-- each part's rows; the engine module adds per QI the extreme codes (a numeric range's
-- ends) or the count of distinct codes (a categorical QI's values).
SELECT r.pid, SUM(r.n) AS weight
FROM :rows AS r
GROUP BY r.pid
