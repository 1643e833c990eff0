-- k-anonymity of any table: the smallest class (suppressed records exempt, as in ARX), the
-- number of classes and of suppressed records.
CREATE OR REPLACE TEMP MACRO anonsql_k(tbl, qis) AS TABLE
SELECT
  MIN(size) FILTER (WHERE NOT suppressed) AS k,
  COUNT(*) FILTER (WHERE NOT suppressed) AS classes,
  COALESCE(SUM(size) FILTER (WHERE suppressed), 0) AS suppressed_rows
FROM anonsql_classes(tbl, qis)
