"""Grading: the pytest plugin, the check skeleton, judges, strategies, cases, report."""
