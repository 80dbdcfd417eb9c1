"""What a grade is about: the kata seam, the reference, its mistakes and the inputs.

Kata and Call (kata.py), the reference in the grader's process (reference.py), its known
mistakes (mistakes.py, transformer.py, mistakes_data.py) and naming the one a wrong answer
is (diagnosis.py), the shared inputs (cases.py, strategies.py; the instructor's seed's
name, examples_seed.py) and how a failing call's inputs are shown (inputs.py), the
sampling filters' rules (filter_rules.py).
"""
