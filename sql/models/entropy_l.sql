-- entropy l-diversity (seed 004 Definitions 10-11): exp of the class's sensitive entropy.
SELECT cs.class_id, EXP(-SUM((cs.c / c.vals) * LN(cs.c / c.vals))) AS value
FROM class_sensitive AS cs
JOIN classes AS c ON c.class_id = cs.class_id
GROUP BY cs.class_id
