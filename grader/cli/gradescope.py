"""`gpt-kata gradescope --out autograder.zip`: a Gradescope autograder bundle.

The bundle carries a wheel of this very grader, built from this checkout, so
that Gradescope grades with exactly the version that built the bundle, whatever
happens to the repository later, and without needing access to it. `setup.sh`
installs that wheel with torch at the pinned version into a virtual environment;
`run_autograder` runs `python -I -m grader.grading.gradescope` from it, in `/`, so
that nothing in the folder it was started from is imported.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from grader import paths
from grader.cli.errors import EXIT_PASS, UsageError

TORCH = "torch==2.13.0"
# Where setup.sh puts the grader's environment on Gradescope's image.
VENV = "/opt/gpt-kata"
# What of a checkout the wheel is built from: the package and the kata's own files.
SOURCES = ["pyproject.toml", "README.md", "grader", "problems", "solutions", "data"]

SETUP_SH = """#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image.
# Built from {origin}.
set -euo pipefail
here="$(cd "$(dirname "${{BASH_SOURCE[0]}}")" && pwd)"
venv="${{GPT_KATA_VENV:-{venv}}}"
if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    apt-get update -q
    apt-get install -y -q python3 python3-venv python3-pip
fi
python3 -m venv "$venv"
"$venv/bin/pip" install -q --upgrade pip
# The CPU build of torch, at the version the grader's goldens were made with.
"$venv/bin/pip" install -q "{torch}" --index-url https://download.pytorch.org/whl/cpu
# The grader itself, from the wheel in this bundle; its other dependencies from PyPI.
"$venv/bin/pip" install -q "$here"/wheels/*.whl
"$venv/bin/python" -m grader --help >/dev/null
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope runs this for each submission: it grades /autograder/submission and
# writes /autograder/results/results.json. GPT_KATA_AUTOGRADER_ROOT stands in for
# /autograder, to try the bundle on any machine.
set -uo pipefail
python="${{GPT_KATA_PYTHON:-{venv}/bin/python}}"
export GPT_KATA_ALLOW_UNISOLATED="${{GPT_KATA_ALLOW_UNISOLATED:-{unisolated}}}"
# Relative paths are made absolute before leaving the folder they are relative to.
case "$python" in /*) ;; */*) python="$PWD/$python" ;; esac
if [ -n "${{GPT_KATA_AUTOGRADER_ROOT:-}}" ]; then
    export GPT_KATA_AUTOGRADER_ROOT="$(cd "$GPT_KATA_AUTOGRADER_ROOT" && pwd)"
fi
# -I: neither the working folder nor PYTHON* variables decide what is imported, so the
# grader that runs is the installed one, never a grader/ folder in a submission.
cd /
exec "$python" -I -m grader.grading.gradescope
"""


def checkout_root() -> Path:
    root = paths.PACKAGE.parent
    if paths.INSTALLED or not (root / "pyproject.toml").is_file():
        raise UsageError("the bundle embeds a wheel built from a checkout of the grader: "
                         "run this command from your own clone's install (pip install -e)")
    return root


def origin(root: Path) -> str:
    """Which version of the grader this is, for the reader of setup.sh."""
    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
        return done.stdout.strip() if done.returncode == 0 else ""

    commit = git("rev-parse", "HEAD")
    if not commit:
        return "a copy of gpt-kata outside git"
    url = git("remote", "get-url", "origin") or "a local repository"
    dirty = " with uncommitted changes" if git("status", "--porcelain", "--", *SOURCES) else ""
    return f"{url} at commit {commit}{dirty}"


def build_wheel(root: Path, into: Path) -> Path:
    # Built from a copy, so that the build's own files never land in the checkout.
    with tempfile.TemporaryDirectory(prefix="gpt-kata-wheel-") as tmp:
        source = Path(tmp) / "gpt-kata"
        junk = shutil.ignore_patterns("__pycache__", "*.pyc", ".gpt-kata", "*.bak", "runs")
        for name in SOURCES:
            path = root / name
            if path.is_dir():
                shutil.copytree(path, source / name, ignore=junk)
            else:
                source.mkdir(parents=True, exist_ok=True)
                shutil.copy(path, source / name)
        done = subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
             "--no-index", "-q", "-w", str(into), str(source)],
            capture_output=True, text=True)
        if done.returncode != 0:
            raise UsageError(f"building the wheel failed: {done.stderr.strip()[-500:]}")
    (wheel,) = into.glob("gpt_kata-*.whl")
    return wheel


def add_text(bundle: zipfile.ZipFile, name: str, text: str, executable: bool) -> None:
    info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
    info.external_attr = (0o100755 if executable else 0o100644) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    bundle.writestr(info, text)


def gradescope(args: argparse.Namespace) -> int:
    out = Path(args.out)
    if out.suffix != ".zip":
        raise UsageError(f"--out {out}: Gradescope takes a .zip")
    if not out.parent.is_dir():
        raise UsageError(f"--out {out}: there is no folder {out.parent}")
    root = checkout_root()
    built_from = origin(root)
    with tempfile.TemporaryDirectory(prefix="gpt-kata-bundle-") as tmp:
        wheel = build_wheel(root, Path(tmp))
        partial = out.with_name(out.name + ".tmp")
        with zipfile.ZipFile(partial, "w") as bundle:
            add_text(bundle, "setup.sh",
                     SETUP_SH.format(origin=built_from, venv=VENV, torch=TORCH), True)
            add_text(bundle, "run_autograder",
                     RUN_AUTOGRADER.format(venv=VENV, unisolated=int(args.allow_unisolated)),
                     True)
            bundle.write(wheel, f"wheels/{wheel.name}")
            add_text(bundle, "VERSION", built_from + "\n", False)
        partial.replace(out)
    print(f"wrote {out}: setup.sh, run_autograder and wheels/{wheel.name}, "
          f"built from {built_from}")
    return EXIT_PASS


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("gradescope", help="build a Gradescope autograder bundle (.zip)")
    p.add_argument("--out", required=True, metavar="FILE.zip", help="where the bundle goes")
    p.add_argument("--allow-unisolated", action="store_true",
                   help="grade even where Gradescope's container allows no sandbox "
                        "(default: refuse, and say so in results.json)")
    p.set_defaults(run=gradescope)
