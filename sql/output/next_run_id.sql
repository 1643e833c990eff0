SELECT COALESCE(MAX(r.run_id), 0) + 1 FROM anonsql_runs AS r
