INSERT INTO anonsql_recodings (run_id, original, generalized)
SELECT :run_id, f.original, f.generalized FROM :frame AS f
