-- popcount.sql for PostgreSQL: BIT_COUNT takes a bit string (PostgreSQL 14 and later), not a
-- BIGINT; the mask's 64 bits as one.
SELECT BIT_COUNT(CAST(:mask AS BIT(64))) AS bits
