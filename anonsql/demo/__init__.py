"""The demo: a seeded census-like table and the hierarchies anonsql ships for it."""
