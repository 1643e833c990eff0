-- delta-disclosure privacy (Brickell, Shmatikov 2008; ARX's DDisclosurePrivacy): the largest
-- |log2(p / q)| over the sensitive values present in the class.
SELECT cs.class_id, MAX(ABS(LN((cs.c / c.vals) / o.q) / LN(2))) AS value
FROM class_sensitive AS cs
JOIN classes AS c ON c.class_id = cs.class_id
JOIN overall AS o ON o.s = cs.s
GROUP BY cs.class_id
