-- The sensitive attribute's distinct values as text (NULL as the label NULL, which the
-- models read as no value), among the rows Mondrian partitions (:known).
SELECT COALESCE(CAST(:col AS VARCHAR), 'NULL') AS v
FROM :source AS b
WHERE :known
GROUP BY COALESCE(CAST(:col AS VARCHAR), 'NULL')
