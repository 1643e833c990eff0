-- The JIT compiler off for the session while Mondrian runs in the engine, then back to what
-- it was (:value): the per-depth statements are many and short, and their wide CASE
-- expressions cost seconds of compiling each once the planner's cost estimate passes
-- jit_above_cost (17 s of 17.1 s for one depth of 100,000 rows on PostgreSQL 15).
SELECT SET_CONFIG('jit', :value, FALSE) AS jit
