"""The `gpt-kata` command: its parser, and each command handed to where it lives.

main.py builds the parser, runs the small learner's commands itself (list, hint,
reset, train) and hands the others to the learner's (grader/learner/), the
classroom's (grader/classroom/) or the release's (grader/release/) modules.
"""
