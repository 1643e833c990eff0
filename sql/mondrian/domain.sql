-- One quasi-identifier's distinct values, as text (the key the output's guard matches rows
-- by) and as the engine types them (which says whether the QI is numeric), among the rows
-- Mondrian partitions (:known: every QI has a value). anonsql.data.points.qi_domain codes
-- them, as it codes the in-memory histogram.
SELECT CAST(:col AS VARCHAR) AS v, :col AS r
FROM :source AS b
WHERE :known
GROUP BY CAST(:col AS VARCHAR), :col
