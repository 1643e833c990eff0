-- basic beta-likeness (Cao, Karras 2012, Definition 2): the class's largest relative
-- distance (p - q) / q over its sensitive values.
SELECT cs.class_id, MAX((cs.c / c.vals - o.q) / o.q) AS value
FROM class_sensitive AS cs
JOIN classes AS c ON c.class_id = cs.class_id
JOIN overall AS o ON o.s = cs.s
GROUP BY cs.class_id
