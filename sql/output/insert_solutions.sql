INSERT INTO anonsql_solutions
SELECT :run_id, f.levels, f.transformation, f.score, f.suppressed_rows, f.classes, f.minimal,
  f.optimal
FROM :frame AS f
