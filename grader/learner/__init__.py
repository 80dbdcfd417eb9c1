"""The learner's side: the commands a learner runs and what they share.

Grade, watch, and the status list, hint and reset read; a notebook's check(); options,
exit codes, output, the sandbox notice, a report shown; in the kata and in a learners'
copy (practice.py). The tools that run the learner's code (talk, trace, train --yours)
are in tools/.
"""
