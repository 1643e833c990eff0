"""Helpers shared by test files."""
