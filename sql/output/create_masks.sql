-- The tokens of keyed masks (pseudonym, token, fake), keyed by the output that reads them:
-- one row per distinct source value of a masked column at run time. The output reads a
-- row's token by the value's text (``value``); a deployment script's copy holds the SHA-256
-- digest (hex) of that text instead (``digest``, ``value`` NULL), so the script carries no
-- raw identifier. The key that made the tokens is never stored anywhere.
CREATE TABLE IF NOT EXISTS anonsql_masks (
  output VARCHAR NOT NULL,
  run_id INTEGER NOT NULL,
  col VARCHAR NOT NULL,
  value VARCHAR,
  digest VARCHAR,
  token VARCHAR NOT NULL
)
