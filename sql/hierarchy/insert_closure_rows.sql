-- Closure rows computed by the client (Hierarchy.closure_frame), for engines where the
-- recursive derivation in insert_closure.sql is slow.
INSERT INTO anonsql_hierarchy_closure (hierarchy, ancestor, descendant, distance)
SELECT CAST(:name AS VARCHAR), f.ancestor, f.descendant, f.distance FROM :frame AS f
