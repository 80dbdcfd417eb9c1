"""Grading: the pytest plugin, the Kata session, failures, judges, strategies, cases, report."""
