-- The parts of this depth that are cut (an allowable try), numbered in part order: the
-- children of the i-th are parts 2i and 2i + 1 of the next depth.
SELECT t.pid, t.dim, t.thr, ROW_NUMBER() OVER (ORDER BY t.pid) - 1 AS seq
FROM :tries AS t
WHERE t.passed
