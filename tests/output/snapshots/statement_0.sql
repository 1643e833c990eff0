ANONYMIZE TABLE census INTO census_k5 WITH (k = 5)
