-- k-anonymity: the value of a class is its size.
SELECT c.class_id, CAST(c.size AS DOUBLE) AS value FROM classes AS c
