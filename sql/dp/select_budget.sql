SELECT source, epsilon, delta, set_at FROM anonsql_dp_budget ORDER BY set_at
