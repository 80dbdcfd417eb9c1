"""The grader's side of the sandbox: starting, serving and ending workers.

Starting a process of this very grader (launch.py) and ending it with everything it
started (ending.py), the fork server and its client, the pool of workers, the handle and
channel to each, the witness that serves and logs their model calls, what a call that
never answered was doing (slow_or_endless.py), the scratch folders, and
SubmissionProcess (process.py), the one object grading talks to.
"""
