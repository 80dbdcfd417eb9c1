"""The learner's tools, run on the learner's own code.

Talk (talk*.py), trace (trace*.py) and train --yours (train_*.py), each with its
learners'-copy variant (practice_*.py).
"""
