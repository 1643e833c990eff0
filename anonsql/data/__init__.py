"""What the search reads from the database: the histogram of distinct QI combinations, and the
equivalence classes of a transformation computed from it (never from the rows)."""
