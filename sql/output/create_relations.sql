-- The last writer of relations anonsql wrote outside anonsql_runs' record: 'represent', 'demo',
-- 'anonymize', or 'import' (a user's data loaded through anonsql: not anonsql's to replace).
CREATE TABLE IF NOT EXISTS anonsql_relations (
  name VARCHAR NOT NULL,
  writer VARCHAR NOT NULL,
  written_at TIMESTAMP NOT NULL
)
