"""Lessons: a guided walk through the pages, written as data (lesson.py), whose notices and checks are filled and
graded from the live run (facts.py)."""
