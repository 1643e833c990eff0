INSERT INTO anonsql_recodings (output, run_id, original, generalized, nodes)
SELECT :output, :run_id, f.original, f.generalized, f.nodes FROM :frame AS f
