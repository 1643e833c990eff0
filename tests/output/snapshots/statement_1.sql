ANONYMIZE TABLE census INTO census_k5 WITH (k = 5, l = 2, qi = (age, sex, zip), sensitive = income, suppression = 0.05, algorithm = 'flash')
