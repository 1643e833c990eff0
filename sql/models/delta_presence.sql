-- delta-presence (Nergiz, Atzori, Clifton 2007; ARX's DPresence): the class's share of its
-- population class, |T ∩ C| / |P ∩ C|; NULL (fails) when the population lacks the class.
SELECT c.class_id, CASE WHEN c.population > 0 THEN c.size / c.population END AS value
FROM classes AS c
