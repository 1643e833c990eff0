-- The counts SafePub's score functions read, per candidate transformation, from its classes
-- on the sample (__anonsql_dp_classes: cand, size, and per QI the class's value's leaves and
-- root flag; anonsql.algorithms.dp.engine adds the per-QI sums to this select).
SELECT cand,
  SUM(CASE WHEN size >= :k THEN 1 ELSE 0 END) AS released_classes,
  SUM(CASE WHEN size >= :k THEN size ELSE 0 END) AS released_rows,
  SUM(CASE WHEN size < :k THEN size ELSE 0 END) AS suppressed_rows,
  SUM(CASE WHEN size >= :k THEN size * size ELSE 0 END) AS sum_squares
FROM __anonsql_dp_classes
GROUP BY cand
