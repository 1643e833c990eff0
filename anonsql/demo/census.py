"""A seeded, census-like table for demos, tests and benchmarks.

The columns depend on each other the way census columns do (education on age, marital
status on age, income on education, age, sex and occupation; zip codes cluster in regions),
so equivalence classes are as uneven as in real data and anonymization has real work to do.
Nothing here comes from a real data set.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

SEX = ["female", "male"]
RACE = ["White", "Black", "Asian", "Pacific Islander", "Native American", "Other"]
RACE_P = [0.70, 0.13, 0.08, 0.01, 0.02, 0.06]
EDUCATION = [
    "No schooling",
    "Grades 1-4",
    "Grades 5-8",
    "Grades 9-12",
    "High school graduate",
    "Some college",
    "Associate",
    "Bachelors",
    "Masters",
    "Professional school",
    "Doctorate",
]
EDU_P = [0.01, 0.01, 0.03, 0.07, 0.30, 0.20, 0.08, 0.19, 0.07, 0.02, 0.02]
COUNTRY = [
    "United States",
    "Canada",
    "Mexico",
    "Guatemala",
    "El Salvador",
    "Cuba",
    "Dominican Republic",
    "Jamaica",
    "Colombia",
    "Brazil",
    "Peru",
    "Germany",
    "United Kingdom",
    "Italy",
    "Poland",
    "India",
    "China",
    "Philippines",
    "Vietnam",
    "Korea",
    "Nigeria",
    "Egypt",
]
OCCUPATION = [
    "Manager",
    "Engineer",
    "Teacher",
    "Nurse",
    "Clerk",
    "Sales",
    "Cook",
    "Cleaner",
    "Guard",
    "Mechanic",
    "Electrician",
    "Carpenter",
    "Driver",
    "Machine operator",
    "Farmer",
]
WHITE_COLLAR = 6  # the first six occupations


def _zip_codes(rng: np.random.Generator, n: int) -> np.ndarray:
    # 40 regions (3-digit prefixes) of unequal size, each with up to 30 zip codes.
    prefixes = rng.choice(np.arange(100, 999), size=40, replace=False)
    region_p = rng.zipf(1.6, size=40).astype(float)
    region_p /= region_p.sum()
    region = rng.choice(40, size=n, p=region_p)
    suffix = np.minimum(rng.geometric(0.12, size=n) - 1, 29)
    return np.array([f"{prefixes[r]:03d}{s:02d}" for r, s in zip(region, suffix, strict=True)])


def generate(rows: int = 30_000, seed: int = 7) -> pd.DataFrame:
    """``rows`` people with age, sex, race, marital status, education, zip, country,
    occupation and income class. The same seed gives the same table."""
    if rows < 1:
        raise ValueError("rows must be positive")
    rng = np.random.default_rng(seed)
    age = np.clip(np.round(rng.gamma(6.0, 6.5, size=rows) + 17), 17, 90).astype(np.int64)
    sex = rng.choice(SEX, size=rows)
    race = rng.choice(RACE, size=rows, p=RACE_P)

    # younger people have had less time to finish long studies
    edu_idx = rng.choice(len(EDUCATION), size=rows, p=EDU_P)
    young = age < 23
    edu_idx[young] = np.minimum(edu_idx[young], rng.integers(3, 7, size=young.sum()))
    education = np.array(EDUCATION)[edu_idx]

    p_married = np.clip((age - 18) / 30, 0.02, 0.65)
    marital = np.where(rng.random(rows) < p_married, "Married", "Never married")
    older = age > 30
    other = rng.choice(
        ["Divorced", "Separated", "Widowed", "Civil union"], size=rows, p=[0.6, 0.15, 0.15, 0.1]
    )
    switch = older & (rng.random(rows) < np.clip((age - 30) / 120, 0, 0.4))
    marital = np.where(switch, other, marital)
    widowed_old = (age > 70) & (rng.random(rows) < 0.3)
    marital = np.where(widowed_old, "Widowed", marital)

    country = np.where(rng.random(rows) < 0.9, "United States", rng.choice(COUNTRY[1:], size=rows))
    white_collar_p = np.clip((edu_idx - 3) / 8, 0.05, 0.9)
    wc = rng.random(rows) < white_collar_p
    occ = np.where(
        wc,
        rng.integers(0, WHITE_COLLAR, size=rows),
        rng.integers(WHITE_COLLAR, len(OCCUPATION), size=rows),
    )
    occupation = np.array(OCCUPATION)[occ]

    score = (
        -3.6
        + 0.35 * np.maximum(edu_idx - 4, 0)
        + 0.04 * np.minimum(age - 17, 35)
        + 0.5 * (sex == "male")
        + 0.6 * wc
    )
    income = np.where(rng.random(rows) < 1 / (1 + np.exp(-score)), ">50K", "<=50K")
    return pd.DataFrame(
        {
            "age": age,
            "sex": sex,
            "race": race,
            "marital_status": marital,
            "education": education,
            "zip": _zip_codes(rng, rows),
            "country": country,
            "occupation": occupation,
            "income": income,
        }
    )
