-- l-diversity of any table (suppressed records exempt): distinct-l is the fewest distinct
-- sensitive values in a class; entropy-l is the smallest exp(entropy) of a class's sensitive
-- distribution (seed 004 Def. 10, natural logarithm).
CREATE OR REPLACE TEMP MACRO anonsql_l(tbl, qis, sensitive) AS TABLE
SELECT MIN(d) AS distinct_l, MIN(e) AS entropy_l
FROM (
  SELECT p.qi, COUNT(*) AS d, EXP(-SUM(p.p * LN(p.p))) AS e
  FROM (
    SELECT c.qi, c.n / SUM(c.n) OVER (PARTITION BY c.qi) AS p
    FROM anonsql_sensitive_counts(tbl, qis, sensitive) AS c
    WHERE NOT c.suppressed
  ) AS p
  GROUP BY p.qi
)
