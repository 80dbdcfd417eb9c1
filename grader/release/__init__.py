"""The learners' copy of the kata: statements, starters and a practice grader, no answers.

`gpt-kata release OUT` (grader/release/command.py) writes it with `build.write_release`.
The practice grader it ships is the package in `practice/`, copied as it is; the
stored cases it judges against are made here, from the same check modules the
instructor's grade runs, so adding a problem still means writing it once.
"""
