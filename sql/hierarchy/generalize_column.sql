-- Every row of the source with one column replaced by its label on a hierarchy level.
SELECT s.* REPLACE (m.generalized AS :col)
FROM :source AS s
JOIN :level_map AS m ON m.value = CAST(s.:col AS VARCHAR)
