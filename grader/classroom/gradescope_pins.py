"""The exact versions the Gradescope bundle installs: data/gradescope-pins.txt.

The bundle must build byte for byte the same from the same commit and install the
same packages every time Gradescope builds its image, so its versions live in the
repository, not in whatever environment builds the bundle. The file lists every
package the grader needs at run time, and what those need in turn, each pinned with
`==`, for the one Python and platform it was made on (its `# python:` line; setup.sh
installs that Python). torch is the goldens' version (data/manifest.json).

`python -m grader.classroom.gradescope_pins` writes the file again from the environment the
project is tested in: gpt-kata's own requirements and theirs, walked through the
installed packages' metadata. tests/test_gradescope_pins.py checks the file against
pyproject.toml's ranges, against the manifest's torch, and that nothing it needs is
missing from it.
"""

from __future__ import annotations

import json
import platform
import re
import sys
from importlib import metadata
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

PINS = Path("data") / "gradescope-pins.txt"
PYTHON_LINE = re.compile(r"#\s*python:\s*(\d+\.\d+)\s*$")
HEADER = """\
# What the Gradescope bundle installs (gpt-kata gradescope): every package the grader
# needs at run time and what those need, each at the version the project is tested
# with, for CPython {python} on Linux {machine}. torch is the goldens' (data/manifest.json),
# installed from PyTorch's CPU index; the rest from PyPI, wheels only.
# Written by `python -m grader.classroom.gradescope_pins` from the tested environment;
# tests/test_gradescope_pins.py checks it against pyproject.toml's ranges.
# python: {python}
"""
# The installer itself, so that every build of the image resolves the same way.
INSTALLERS = ("pip",)


def read_pins(path: Path) -> tuple[str, dict[str, str]]:
    """The file's Python version ("3.11") and its pins (canonical name -> version)."""
    python = ""
    pins: dict[str, str] = {}
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        if match := PYTHON_LINE.fullmatch(line):
            python = match[1]
        if not line or line.startswith("#"):
            continue
        requirement = Requirement(line)
        (spec, *more) = list(requirement.specifier) or [None]
        if spec is None or more or spec.operator != "==" or "*" in spec.version:
            raise ValueError(f"{path}, line {number}: {line!r} is not pinned with ==")
        if requirement.marker is not None or requirement.extras:
            raise ValueError(f"{path}, line {number}: {line!r}: a pin takes no marker or extra")
        pins[canonicalize_name(requirement.name)] = spec.version
    if not python:
        raise ValueError(f"{path}: no '# python: X.Y' line says which Python it is for")
    return python, pins


def target_environment(python: str) -> dict[str, str]:
    """The marker environment of Gradescope's image: Linux, this machine's CPU type."""
    env = default_environment()
    env.update(sys_platform="linux", platform_system="Linux", os_name="posix",
               python_version=python, python_full_version=f"{python}.0",
               implementation_name="cpython", platform_python_implementation="CPython")
    return env


def needed(requirements: list[str], env: dict[str, str]) -> list[Requirement]:
    """Those of `requirements` that apply in `env`, leaving out optional extras'."""
    kept = []
    for text in requirements:
        requirement = Requirement(text)
        marker = requirement.marker
        if marker is None or marker.evaluate({**env, "extra": ""}):
            kept.append(requirement)
    return kept


def installed_closure(env: dict[str, str]) -> dict[str, str]:
    """gpt-kata's run-time requirements and theirs, as installed here (name -> version)."""
    found: dict[str, str] = {}
    todo = needed(metadata.requires("gpt-kata") or [], env)
    while todo:
        requirement = todo.pop()
        name = canonicalize_name(requirement.name)
        if name in found:
            continue
        version = metadata.version(name)
        found[name] = version.split("+")[0]  # torch's +cpu: the index says which build
        todo.extend(needed(metadata.requires(name) or [], env))
    return found


def write(root: Path) -> Path:
    """data/gradescope-pins.txt from this environment (a maintainer's step)."""
    manifest = json.loads((root / "data" / "manifest.json").read_text(encoding="utf-8"))
    goldens = manifest["platform"]["torch"].split("+")[0]
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    pins = installed_closure(target_environment(python))
    if pins.get("torch") != goldens:
        raise SystemExit(f"torch {pins.get('torch')} is installed; the goldens were made with "
                         f"{goldens}: install that one first")
    pins.update({name: metadata.version(name) for name in INSTALLERS})
    text = HEADER.format(python=python, machine=platform.machine())
    text += "".join(f"{name}=={version}\n" for name, version in sorted(pins.items()))
    path = root / PINS
    path.parent.mkdir(exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


if __name__ == "__main__":
    from grader import paths

    checkout = paths.PACKAGE.parent
    if paths.INSTALLED or not (checkout / "pyproject.toml").is_file():
        raise SystemExit("the pins are written into a checkout of the grader (pip install -e)")
    print(f"wrote {write(checkout)}", file=sys.stderr)
