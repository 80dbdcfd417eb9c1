"""Grading, by floor: values/, subject/, judging/, contracts/, engine/.

values/ (values and tolerances), subject/ (the kata seam, references, inputs, cases),
judging/, contracts/, engine/ (submissions in, a Report out; the report's own floor is
grader/reports/, under the engine).
"""

import os

# Hypothesis runs every plugin its entry points name when it is first imported, and
# every module of grading/ that imports it is imported after this package. No plugin
# of the learner's environment may change a grade (pytest's are turned off where the
# checks run, engine/plugin.py); and finding them reads the metadata of every
# installed distribution: about 0.2 s of a one-problem grade on 2 cores.
os.environ["HYPOTHESIS_NO_PLUGINS"] = "1"
