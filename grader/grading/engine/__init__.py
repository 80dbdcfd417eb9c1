"""The engine that turns submissions into a report.

The pytest plugin that runs the check modules (plugin.py) and grade_problems()
(session.py), the one entry point; a grade shared with a forked helper (helpers.py);
a Ctrl-C that stops the checks however it arrives (ctrl_c.py); torch.manual_seed
seeding the CPU's generator alone in the grader's process (seeding.py).
"""
