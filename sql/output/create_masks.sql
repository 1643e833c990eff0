-- The tokens of keyed masks (pseudonym, token, fake), keyed by the output that reads them and
-- by the SHA-256 digest (hex) of the source value's text: the raw identifier is not stored.
-- The key that made the tokens is never stored anywhere.
CREATE TABLE IF NOT EXISTS anonsql_masks (
  output VARCHAR NOT NULL,
  run_id INTEGER NOT NULL,
  col VARCHAR NOT NULL,
  digest VARCHAR NOT NULL,
  token VARCHAR NOT NULL
)
