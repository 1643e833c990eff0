-- k-map with a population table (El Emam, Dankar 2008; ARX's KMap with a subset): the class's
-- record count in the population table.
SELECT c.class_id, CAST(c.population AS DOUBLE) AS value FROM classes AS c
