INSERT INTO anonsql_masks (output, run_id, col, value, digest, token)
SELECT :output, :run_id, f.col, f.value, CAST(NULL AS VARCHAR), f.token FROM :frame AS f
