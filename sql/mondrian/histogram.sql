-- The histogram Mondrian partitions in the engine: one row per distinct QI tuple, its QIs as
-- codes (ranks in the QI's order, joined from the uploaded domains) and its rows; the
-- engine module adds the joins, the codes and, when a model reads the sensitive attribute,
-- one count per sensitive value (s0, s1, ...).
SELECT 0 AS pid, COUNT(*) AS n
FROM :source AS b
