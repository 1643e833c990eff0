-- PostgreSQL's JIT compiler setting, read before a run in the engine (to put it back after).
SELECT CURRENT_SETTING('jit') AS jit
