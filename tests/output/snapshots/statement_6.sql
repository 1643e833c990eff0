CREATE TABLE t2 AS SELECT
  a,
  b
FROM t WITH ANONYMIZATION (ALGORITHM 'L-DIVERSITY' PARAMETERS '{"k": 2, "l": 2}' COLUMN a PARAMETERS '{"is_quasi_identifier": true}' COLUMN b PARAMETERS '{"is_sensitive": true}')
