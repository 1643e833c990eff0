-- t-closeness of any table with the equal-distance EMD (half the L1 distance between a
-- class's sensitive distribution and the whole table's): the largest over the classes
-- (suppressed records exempt from the classes, included in the table's distribution).
-- Values a class lacks add their whole share, so 0.5 * (1 + sum over the class's values of
-- |p_class - p_table| - p_table) is the distance.
CREATE OR REPLACE TEMP MACRO anonsql_t(tbl, qis, sensitive) AS TABLE
WITH counts AS (
  SELECT * FROM anonsql_sensitive_counts(tbl, qis, sensitive)
), overall AS (
  SELECT s, SUM(n) / (SELECT SUM(n) FROM counts) AS q FROM counts GROUP BY s
), shares AS (
  SELECT c.qi, c.s, c.n / SUM(c.n) OVER (PARTITION BY c.qi) AS p
  FROM counts AS c WHERE NOT c.suppressed
)
SELECT MAX(d) AS t
FROM (
  SELECT sh.qi, 0.5 * (1 + SUM(ABS(sh.p - o.q) - o.q)) AS d
  FROM shares AS sh JOIN overall AS o ON o.s = sh.s
  GROUP BY sh.qi
)
