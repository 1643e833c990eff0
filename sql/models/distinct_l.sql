-- distinct l-diversity: number of distinct sensitive values in the class.
SELECT cs.class_id, CAST(COUNT(*) AS DOUBLE) AS value
FROM class_sensitive AS cs
GROUP BY cs.class_id
