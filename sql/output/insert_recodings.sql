INSERT INTO anonsql_recodings (run_id, original, generalized, nodes)
SELECT :run_id, f.original, f.generalized, f.nodes FROM :frame AS f
