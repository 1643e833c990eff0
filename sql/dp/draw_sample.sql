-- SafePub's random sample (Bernoulli, probability beta): a record is drawn when the first
-- 52 bits (13 hex digits) of SHA-256(key || its row number) are below :threshold, a
-- 13-digit lowercase hex number (beta = threshold / 2^52). The key is 256 secret bits from
-- the operating system (anonsql.algorithms.dp.mechanisms), bound as a parameter (:key is
-- filled with `?`) so that no statement text holds it; the row numbers only need to be
-- distinct within this one statement, which writes the sample once (it is stored, never
-- drawn again by a read).
SELECT numbered.*
FROM (
  SELECT s.*, ROW_NUMBER() OVER () AS __anonsql_row
  FROM :source AS s
) AS numbered
WHERE SUBSTRING(SHA256(:key || CAST(numbered.__anonsql_row AS VARCHAR)), 1, 13) < :threshold
