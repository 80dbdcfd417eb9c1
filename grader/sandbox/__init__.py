"""Running a learner's code apart from the grader.

What crosses the wire (wire/), what runs inside the worker with its layers (worker/), and
the grader's side of it (host/).
"""
