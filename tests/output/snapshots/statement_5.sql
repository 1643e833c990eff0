CREATE OR REPLACE VIEW adult_k5 AS SELECT
  *
FROM adult WITH ANONYMIZATION (ALGORITHM 'K-ANONYMITY' PARAMETERS '{"k": 5, "suppression_limit": 0.05}' COLUMN age PARAMETERS '{"is_quasi_identifier": true, "hierarchy": "adult_age"}' COLUMN salary PARAMETERS '{"is_sensitive": true}')
