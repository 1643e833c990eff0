-- draw_sample.sql for PostgreSQL: sha256() takes bytea and the hex digits compare in the
-- "C" collation (bytewise), whatever the database's collation.
SELECT numbered.*
FROM (
  SELECT s.*, ROW_NUMBER() OVER () AS __anonsql_row
  FROM :source AS s
) AS numbered
WHERE SUBSTRING(ENCODE(SHA256(CONVERT_TO(:key || CAST(numbered.__anonsql_row AS TEXT), 'UTF8')), 'hex'), 1, 13) COLLATE "C" < :threshold COLLATE "C"
