INSERT INTO anonsql_masks (output, run_id, col, digest, token)
SELECT :output, :run_id, f.col, f.digest, f.token FROM :frame AS f
