INSERT INTO anonsql_runs VALUES (
  :run_id, CURRENT_TIMESTAMP, :source, :output, :materialize, :algorithm, :parameters, :levels,
  :measures, :timings, :checked, :lattice_size
)
