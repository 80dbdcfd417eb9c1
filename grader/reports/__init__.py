"""A grade's report and its formats.

One check's result as data (results.py), points and the late penalty (scoring.py,
late.py), what graded it (provenance.py), the terminal view and JSON (report.py), JUnit
(junit.py). Holds no check: a learners' copy shows its grade with it.
"""
