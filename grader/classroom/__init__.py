"""The instructor's side: grading a class and the classroom platforms' autograders.

A class graded from its roster (gradebook/), Gradescope (gradescope_bundle.py builds the
bundle, gradescope_autograder.py runs in it, gradescope_check.py its self-test,
gradescope_pins.py its versions), Classroom50's autograder (classroom50.py), which
solutions look alike (similarity.py), a gradebook as CI's summary (summary.py).
"""
