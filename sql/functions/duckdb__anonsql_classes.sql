-- The equivalence classes of any table for the given QI columns: one row per class with
-- its QI values as a list, its size, and whether it is the suppressed class (every QI '*').
-- QI columns are cast to VARCHAR first, so columns of different types make one list.
CREATE OR REPLACE TEMP MACRO anonsql_classes(tbl, qis) AS TABLE
SELECT q.qi, COUNT(*) AS size, len(list_filter(q.qi, lambda x: x IS DISTINCT FROM '*')) = 0 AS suppressed
FROM (
  SELECT [*COLUMNS(lambda c: list_contains(qis, c))] AS qi
  FROM (SELECT CAST(COLUMNS(lambda c: list_contains(qis, c)) AS VARCHAR) FROM query_table(tbl))
) AS q
GROUP BY q.qi
