-- k-map estimated from the sample (El Emam, Dankar 2008; ARX's KMap with a CellSizeEstimator):
-- the class size over the derived k' for the table's current size (:derived, a CASE over the
-- row count), so a class passes when value >= 1.
SELECT c.class_id, c.size / :derived AS value FROM classes AS c
