"""A seeded table of the kind a new user brings: a name, an e-mail address and a phone number
per person (direct identifiers, unique), a birth date, a five-digit zip code and a gender
(quasi-identifiers), an income and a diagnosis (sensitive). Made with numpy, so 10 million
rows take seconds; the same seed gives the same table."""

from __future__ import annotations

import numpy as np
import pandas as pd

FIRST = [
    "James",
    "Mary",
    "Robert",
    "Patricia",
    "John",
    "Jennifer",
    "Michael",
    "Linda",
    "David",
    "Elizabeth",
    "William",
    "Barbara",
    "Richard",
    "Susan",
    "Joseph",
    "Jessica",
    "Thomas",
    "Sarah",
    "Charles",
    "Karen",
    "Christopher",
    "Lisa",
    "Daniel",
    "Nancy",
    "Matthew",
    "Betty",
    "Anthony",
    "Sandra",
    "Mark",
    "Margaret",
    "Donald",
    "Ashley",
    "Steven",
    "Kimberly",
    "Andrew",
    "Emily",
    "Paul",
    "Donna",
    "Joshua",
    "Michelle",
    "Kenneth",
    "Carol",
    "Kevin",
    "Amanda",
    "Brian",
    "Melissa",
    "George",
    "Deborah",
]
LAST = [
    "Smith",
    "Johnson",
    "Williams",
    "Brown",
    "Jones",
    "Garcia",
    "Miller",
    "Davis",
    "Rodriguez",
    "Martinez",
    "Hernandez",
    "Lopez",
    "Gonzalez",
    "Wilson",
    "Anderson",
    "Thomas",
    "Taylor",
    "Moore",
    "Jackson",
    "Martin",
    "Lee",
    "Perez",
    "Thompson",
    "White",
    "Harris",
    "Sanchez",
    "Clark",
    "Ramirez",
    "Lewis",
    "Robinson",
    "Walker",
    "Young",
    "Allen",
    "King",
    "Wright",
    "Scott",
    "Torres",
    "Nguyen",
    "Hill",
    "Flores",
    "Green",
    "Adams",
    "Nelson",
    "Baker",
    "Hall",
    "Rivera",
    "Campbell",
    "Mitchell",
]
DOMAINS = ("example.com", "example.org", "example.net", "mail.example", "post.example")
DIAGNOSES = ("flu", "bronchitis", "gastritis", "hypertension", "diabetes", "asthma", "migraine")


def people(rows: int = 50_000, seed: int = 11) -> pd.DataFrame:
    """``rows`` people: name, email, phone, birth_date, zip, gender, income, diagnosis."""
    if rows < 1:
        raise ValueError("rows must be positive")
    rng = np.random.default_rng(seed)
    ids = np.arange(rows)
    first = np.array(FIRST)[rng.integers(0, len(FIRST), rows)]
    last = np.array(LAST)[rng.integers(0, len(LAST), rows)]
    name = pd.Series(first, dtype=object) + " " + pd.Series(last, dtype=object)
    # unique e-mail addresses and phone numbers: the person's number is part of each
    email = (
        pd.Series(np.char.lower(first.astype(str)), dtype=object)
        + "."
        + pd.Series(np.char.lower(last.astype(str)), dtype=object)
        + pd.Series(ids, dtype=object).astype(str)
        + "@"
        + pd.Series(np.array(DOMAINS)[ids % len(DOMAINS)], dtype=object)
    )
    perm = rng.permutation(rows)
    area = 201 + (perm // 10_000_000) % 700
    phone = (
        pd.Series(area, dtype=object).astype(str)
        + "-"
        + pd.Series(200 + (perm // 10_000) % 800, dtype=object).astype(str)
        + "-"
        + pd.Series(perm % 10_000, dtype=object).astype(str).str.zfill(4)
    )
    birth = pd.to_datetime("1930-01-01") + pd.to_timedelta(
        rng.integers(0, 365 * 75, rows), unit="D"
    )
    zips = pd.Series(rng.integers(1000, 1400, rows) * 10 + rng.integers(0, 10, rows)).astype(str)
    zips = zips.str.zfill(5)
    gender = np.where(rng.random(rows) < 0.5, "F", "M")
    income = np.round(np.exp(rng.normal(10.6, 0.5, rows)), -2)
    diagnosis = np.array(DIAGNOSES)[rng.integers(0, len(DIAGNOSES), rows)]
    return pd.DataFrame(
        {
            "name": name,
            "email": email,
            "phone": phone,
            "birth_date": birth.date if rows <= 1_000_000 else birth.values.astype("datetime64[D]"),
            "zip": zips,
            "gender": gender,
            "income": income,
            "diagnosis": diagnosis,
        }
    )


__all__ = ["people"]
