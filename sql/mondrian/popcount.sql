-- The number of bits set in a bitmask (:mask, a BIGINT of at most 62 value bits): the count
-- of distinct values a part or a side holds, each value one bit (anonsql.algorithms.mondrian.engine).
SELECT BIT_COUNT(:mask) AS bits
