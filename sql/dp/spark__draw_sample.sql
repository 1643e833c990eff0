-- draw_sample.sql for Spark: SHA2(x, 256) is the hex digest; monotonically_increasing_id()
-- numbers the rows distinctly without moving them to one partition (computed once: the
-- sample is written by one CREATE TABLE ... AS).
SELECT numbered.*
FROM (
  SELECT s.*, MONOTONICALLY_INCREASING_ID() AS __anonsql_row
  FROM :source AS s
) AS numbered
WHERE SUBSTRING(SHA2(CONCAT(:key, CAST(numbered.__anonsql_row AS STRING)), 256), 1, 13) < :threshold
