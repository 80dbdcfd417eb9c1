"""Where the project's files live. Importing this is cheap: no torch."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data"
# Pristine copies of the starters: the tests grade these, never the learner's problems/.
STARTERS = DATA / "starters"
PROBLEMS = ROOT / "problems"
SOLUTIONS = ROOT / "solutions"
CHECKS = Path(__file__).resolve().parent / "checks"
REGISTRY = PROBLEMS / "registry.toml"
STATE = ROOT / ".gpt-kata"
