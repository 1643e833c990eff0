-- The rows of the parts this depth releases (not cut), under a partition number unique over
-- the run (:base, the parts numbered before this depth, plus the part's number).
SELECT r.pid + :base AS part
FROM :rows AS r
LEFT JOIN :cuts AS c ON c.pid = r.pid
WHERE c.pid IS NULL
