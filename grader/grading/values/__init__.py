"""Grading's first floor: values, tolerances and failures as data.

Every tolerance (tolerances.py), when two outcomes are the same (equality.py), a failed
check as data (failures.py), a worker's error as the learner reads it (worker_errors.py),
learner text made safe to show and store (sanitise.py).
"""
