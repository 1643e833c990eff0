DELETE FROM anonsql_recodings
WHERE run_id IN (SELECT r.run_id FROM anonsql_runs AS r WHERE r.output = :output)
