"""The packages the wheel holds: every folder of grader/, found, and the kata's own files.

Everything else is in pyproject.toml. Discovery is setuptools' own, but a package that
lives outside grader/ under a name inside it (grader._kata.problems, from problems/:
pyproject.toml's package-dir) is nothing it can find, so those three are named.
"""

from setuptools import find_namespace_packages, setup

# A grading folder has no __init__.py (pytest loads its check module by path): namespace
# packages. Each problem's examples/ (learner-style submissions) is the suite's.
GRADER = find_namespace_packages(include=["grader", "grader.*"],
                                 exclude=["*.examples", "*.examples.*", "*__pycache__*"])
KATA = ["grader._kata.problems", "grader._kata.solutions", "grader._kata.data"]

setup(packages=[*GRADER, *KATA])
