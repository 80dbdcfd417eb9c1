"""Where the project's files live. Importing this is cheap: no torch."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data"
PROBLEMS = ROOT / "problems"
SOLUTIONS = ROOT / "solutions"
CHECKS = Path(__file__).resolve().parent / "checks"
REGISTRY = PROBLEMS / "registry.toml"
STATE = ROOT / ".gpt-kata"
