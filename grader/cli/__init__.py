"""The `gpt-kata` command: wiring only.

main.py builds the parser and hands each command to the learner's (grader/learner/), the
classroom's (grader/classroom/) or the release's (grader/release/) module.
"""
