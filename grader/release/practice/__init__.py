"""A practice grader for the learners' copy of gpt-kata.

It judges your solutions on each problem's fixed cases and a few drawn examples
against answers stored in cases.json (the references' outputs, and the outputs of
known mistakes so that they can be named). It holds no reference code. Your
instructor's grade runs the full checks, with drawn examples this copy does not hold.
"""
