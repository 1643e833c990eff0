-- The equivalence classes of any table for the given QI columns: one row per class with
-- its QI values as a list, its size, and whether it is the suppressed class (every QI '*').
-- QI columns are cast to VARCHAR first, so columns of different types make one list.
CREATE OR REPLACE TEMP MACRO anonsql_classes(tbl, qis) AS TABLE
SELECT q.qi, COUNT(*) AS size, len(list_filter(q.qi, lambda x: x IS DISTINCT FROM '*')) = 0 AS suppressed
FROM (
  SELECT [*COLUMNS(lambda c: list_contains(qis, c))] AS qi
  FROM (SELECT CAST(COLUMNS(lambda c: list_contains(qis, c)) AS VARCHAR) FROM query_table(tbl))
) AS q
GROUP BY q.qi

-- Sensitive-value counts per class of any table (helper of anonsql_l and anonsql_t).
-- QI columns are cast to VARCHAR first, so columns of different types make one list.
CREATE OR REPLACE TEMP MACRO anonsql_sensitive_counts(tbl, qis, sensitive) AS TABLE
SELECT r.qi, r.s, COUNT(*) AS n,
       len(list_filter(r.qi, lambda x: x IS DISTINCT FROM '*')) = 0 AS suppressed
FROM (
  SELECT [*COLUMNS(lambda c: list_contains(qis, c))] AS qi,
         COALESCE(CAST(COLUMNS(lambda c: c = sensitive) AS VARCHAR), 'NULL') AS s
  FROM (
    SELECT CAST(COLUMNS(lambda c: list_contains(qis, c)) AS VARCHAR),
           COLUMNS(lambda c: c = sensitive AND NOT list_contains(qis, c))
    FROM query_table(tbl)
  )
) AS r
GROUP BY r.qi, r.s

-- k-anonymity of any table: the smallest class (suppressed records exempt, as in ARX), the
-- number of classes and of suppressed records.
CREATE OR REPLACE TEMP MACRO anonsql_k(tbl, qis) AS TABLE
SELECT
  MIN(size) FILTER (WHERE NOT suppressed) AS k,
  COUNT(*) FILTER (WHERE NOT suppressed) AS classes,
  COALESCE(SUM(size) FILTER (WHERE suppressed), 0) AS suppressed_rows
FROM anonsql_classes(tbl, qis)

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
