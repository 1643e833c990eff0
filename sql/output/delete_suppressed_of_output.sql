-- Suppressed classes of earlier runs that wrote the same output: the new output replaces them.
DELETE FROM anonsql_suppressed WHERE run_id IN (
  SELECT r.run_id FROM anonsql_runs AS r WHERE r.output = :output
)
