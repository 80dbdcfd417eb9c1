"""`gpt-kata gradebook`: grading a class.

- command.py: the command, its options, and one run from the roster to the table;
- roster.py: reading a roster folder (one learner per folder or zip) as data;
- layouts.py: a learner's kata found in what they handed in (a folder, a zip, a git tree);
- repositories.py, roster_csv.py: a roster file of git repositories, each at the
  commit a deadline picks;
- state.py: which learners are already graded, and need no grade again;
- grading.py: grading each learner in a process of its own;
- grade_process.py: one learner's grade process, forked warm where the system allows;
- outputs.py: what is written: the learners' reports, gradebook.csv, the table shown;
- shards.py, merge.py: a class graded in shares, and the shares joined;
- lms_export.py: Canvas's and Moodle's import files.

gradebook.csv as Markdown, for a CI run's summary page, is grader/classroom/summary.py.
"""
