INSERT INTO anonsql_dp_budget VALUES (:source, :epsilon, :delta, CURRENT_TIMESTAMP)
