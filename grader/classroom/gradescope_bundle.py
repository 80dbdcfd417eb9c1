"""`gpt-kata gradescope --out autograder.zip`: a Gradescope autograder bundle.

The bundle carries a wheel of this very grader, built from this checkout, so
that Gradescope grades with exactly the version that built the bundle, whatever
happens to the repository later, and without needing access to it. `setup.sh`
installs that wheel and every package it needs, each at the exact version that
data/gradescope-pins.txt pins (grader/classroom/gradescope_pins.py), into a virtual
environment; `run_autograder` runs `python -I -m grader.classroom.gradescope_autograder` from
it, in `/`, so that nothing in the folder it was started from is imported.
An instructor's seed for the drawn examples (GPT_KATA_EXAMPLES_SEED), set where
the bundle is built, is carried in `run_autograder`, so that Gradescope draws the
examples the instructor's own grades draw. So is the language the bundle is built
in (`gpt-kata --lang zh gradescope`), where it is not English: the learners read
their results in the class's language.

The zip is the same byte for byte whenever it is built from the same commit: its
entries (and the wheel's) in a fixed order, each dated by the commit
(SOURCE_DATE_EPOCH when set) with fixed permissions, and no cache files.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from grader import paths
from grader.classroom.gradebook.repositories import late_penalty
from grader.classroom.gradescope_autograder import BUNDLE_COMMIT
from grader.learner.errors import EXIT_PASS, UsageError
from grader.learner.options import add_late_penalty_options
from grader.locale import ENGLISH, LANGUAGES, language, tr
from grader.reports.late import LatePenalty

# Where setup.sh puts the grader's environment on Gradescope's image.
VENV = "/opt/gpt-kata"
# What of a checkout the wheel is built from: the package and the kata's own files.
SOURCES = ["pyproject.toml", "README.md", "grader", "problems", "solutions", "data"]
TORCH_INDEX = "https://download.pytorch.org/whl/cpu"
# The earliest time a zip entry can say; a date before it is moved up to it.
ZIP_EPOCH = 315532800  # 1980-01-01T00:00:00Z

SETUP_SH = """#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image.
# Built from {origin}.
# Every package is installed at the version requirements.txt pins (wheels only, no
# dependency of theirs picked by pip), then pip check makes sure none is missing.
set -euo pipefail
here="$(cd "$(dirname "${{BASH_SOURCE[0]}}")" && pwd)"
venv="${{GPT_KATA_VENV:-{venv}}}"
# The Python the pins were made for.
python="${{GPT_KATA_BASE_PYTHON:-python{python}}}"
if ! "$python" -c "import ensurepip" 2>/dev/null \\
        && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    apt-get update -q
    apt-get install -y -q "python{python}" "python{python}-venv"
fi
"$python" -m venv "$venv"
pip=("$venv/bin/python" -m pip install -q --no-deps --only-binary=:all: --no-cache-dir)
"${{pip[@]}}" "{pip}"
# The CPU build of torch, at the version the grader's goldens were made with.
"${{pip[@]}}" "{torch}" --index-url {torch_index}
# The rest from PyPI, then the grader itself, from the wheel in this bundle.
"${{pip[@]}}" -r "$here/requirements.txt"
"${{pip[@]}}" "$here"/wheels/*.whl
"$venv/bin/python" -m pip check
"$venv/bin/python" -m grader --help >/dev/null
# What every submission will be graded under here, in the image's build log: the
# sandbox's layers, and the grade of a reference. Told, never a failed build.
GPT_KATA_PYTHON="$venv/bin/python" bash "$here/self_test" \
    || echo "gpt-kata: the self-test above failed: read it before learners submit"
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
{purpose}# GPT_KATA_AUTOGRADER_ROOT stands in for /autograder, to try the bundle on any machine.
set -uo pipefail
python="${{GPT_KATA_PYTHON:-{venv}/bin/python}}"
export GPT_KATA_ALLOW_UNISOLATED="${{GPT_KATA_ALLOW_UNISOLATED:-{unisolated}}}"
{seed}# Relative paths are made absolute before leaving the folder they are relative to.
case "$python" in /*) ;; */*) python="$PWD/$python" ;; esac
if [ -n "${{GPT_KATA_AUTOGRADER_ROOT:-}}" ]; then
    root="$(cd "$GPT_KATA_AUTOGRADER_ROOT" && pwd)" || exit 1
    export GPT_KATA_AUTOGRADER_ROOT="$root"
fi
# -I: neither the working folder nor PYTHON* variables decide what is imported, so the
# grader that runs is the installed one, never a grader/ folder in a submission.
cd /
exec "$python" -I -m grader.classroom.gradescope_autograder{arguments}
"""


# What each script of the two is for, its first comment.
RUN_PURPOSE = """\
# Gradescope runs this for each submission: it grades /autograder/submission and
# writes /autograder/results/results.json.
"""
SELF_TEST_PURPOSE = """\
# setup.sh runs this as Gradescope builds the image: it says which sandbox layers the
# container gives, and grades the grader's reference of the first problem as a
# submission, under the same settings (seed, late penalty, language) as run_autograder.
"""


# The late penalty, as run_autograder sets it when the bundle was built with one.
LATE_LINES = """# The late penalty, applied by the submission's time (submission_metadata.json).
export {variable}={rate}
export {most_variable}={most}
"""

# The class's language, as run_autograder sets it when the bundle is built in one
# other than English.
LANGUAGE_LINE = """# The class's language: the learners read their results in it.
export {variable}={code}
"""

# The instructor's seed, as run_autograder sets it when the bundle carries one.
SEED_LINE = """# The drawn examples come from the instructor's seed, which the learners' copy
# does not hold (grader/grading/subject/strategies.py): set when the bundle was built.
export {variable}={seed}
"""


def run_script(allow_unisolated: bool, seed: str = "", late: LatePenalty | None = None,
               self_test: bool = False, code: str = ENGLISH) -> str:
    """run_autograder (or, with `self_test`, the bundle's self_test): with `seed`, the
    checks draw their examples from it on Gradescope as they do wherever the
    instructor grades with it set; with `late`, a late submission loses its share;
    in a language `code` other than English, the results speak it."""
    from grader.classroom.gradescope_autograder import (
        LANGUAGE_VARIABLE,
        LATE_PENALTY_MAX_VARIABLE,
        LATE_PENALTY_VARIABLE,
    )
    from grader.grading.subject.examples_seed import SEED_VARIABLE

    # English sets nothing: an English bundle is the same byte for byte as before.
    lines = (LANGUAGE_LINE.format(variable=LANGUAGE_VARIABLE, code=shlex.quote(code))
             if code != ENGLISH else "")
    lines += SEED_LINE.format(variable=SEED_VARIABLE, seed=shlex.quote(seed)) if seed else ""
    if late is not None:
        lines += LATE_LINES.format(variable=LATE_PENALTY_VARIABLE,
                                   rate=shlex.quote(late.rate),
                                   most_variable=LATE_PENALTY_MAX_VARIABLE, most=late.most)
    return RUN_AUTOGRADER.format(purpose=SELF_TEST_PURPOSE if self_test else RUN_PURPOSE,
                                 venv=VENV, unisolated=int(allow_unisolated), seed=lines,
                                 arguments=" --self-test" if self_test else "")


def instructor_seed() -> str:
    """The seed set where the bundle is built, to be carried into it ("" for none: an
    empty value is no seed, as in grading)."""
    from grader.grading.subject.examples_seed import SEED_VARIABLE

    return os.environ.get(SEED_VARIABLE, "")


def checkout_root() -> Path:
    root = paths.PACKAGE.parent
    if paths.INSTALLED or not (root / "pyproject.toml").is_file():
        raise UsageError(tr("the bundle embeds a wheel built from a checkout of the grader: "
                            "run this command from your own clone's install (pip install -e)"))
    return root


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else ""


def origin(root: Path) -> str:
    """Which version of the grader this is, for the reader of setup.sh."""
    commit = git(root, "rev-parse", "HEAD")
    if not commit:
        return "a copy of gpt-kata outside git"
    url = git(root, "remote", "get-url", "origin") or "a local repository"
    dirty = " with uncommitted changes" if git(root, "status", "--porcelain", "--",
                                               *SOURCES) else ""
    return f"{url} at commit {commit}{dirty}"


def source_date(root: Path) -> int:
    """When the bundle says its files were made: SOURCE_DATE_EPOCH if set (the
    reproducible-builds convention), else the commit's time, else 1980."""
    text = os.environ.get("SOURCE_DATE_EPOCH") or git(root, "log", "-1", "--format=%ct")
    try:
        return max(int(text), ZIP_EPOCH)
    except ValueError:
        if os.environ.get("SOURCE_DATE_EPOCH"):
            raise UsageError(f"SOURCE_DATE_EPOCH={text!r}: seconds since 1970") from None
        return ZIP_EPOCH


def requirements(root: Path) -> tuple[str, dict[str, str], str]:
    """The pinned Python and packages, checked against the goldens' torch, and that
    torch's full version (its build too: +cpu)."""
    from grader.classroom.gradescope_pins import PINS, read_pins

    try:
        python, pins = read_pins(root / PINS)
    except (OSError, ValueError) as exc:
        raise UsageError(f"the bundle's pins: {exc}") from None
    manifest = json.loads((root / "data" / "manifest.json").read_text(encoding="utf-8"))
    goldens = manifest["platform"]["torch"]
    if pins.get("torch") != goldens.split("+")[0] or "pip" not in pins:
        raise UsageError(f"{root / PINS} must pin pip, and torch at the goldens' {goldens}")
    return python, pins, goldens


def zip_info(name: str, stamp: int, mode: int, compress: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=time.gmtime(stamp)[:6])
    info.create_system = 3  # Unix, wherever it is built, so the mode bits mean the same
    info.external_attr = (0o100000 | mode) << 16
    info.compress_type = compress
    return info


def write_entries(target: Path, entries: dict[str, tuple[bytes, int]], stamp: int,
                  compress: int) -> None:
    """A zip of `entries` (name -> content, mode) in name order, every one dated `stamp`."""
    with zipfile.ZipFile(target, "w") as archive:
        for name in sorted(entries, key=wheel_order):
            content, mode = entries[name]
            archive.writestr(zip_info(name, stamp, mode, compress), content)


def wheel_order(name: str) -> tuple[bool, bool, str]:
    # As wheel tools write them: the .dist-info folder last, its RECORD at the very end.
    top = name.split("/", 1)[0]
    return top.endswith(".dist-info"), name.endswith(".dist-info/RECORD"), name


def normalise_wheel(wheel: Path, stamp: int) -> None:
    """Rewrite the wheel in a fixed order, dates and modes; RECORD's lines sorted too.
    Its files and their hashes in RECORD are unchanged, so it installs as built."""
    entries: dict[str, tuple[bytes, int]] = {}
    with zipfile.ZipFile(wheel) as archive:
        for info in archive.infolist():
            if info.is_dir() or "__pycache__/" in info.filename or info.filename.endswith(
                    ".pyc"):
                continue
            content = archive.read(info)
            if info.filename.endswith(".dist-info/RECORD"):
                rows = content.decode("utf-8").splitlines()
                content = "".join(f"{r}\n" for r in sorted(rows, key=wheel_order) if r).encode()
            executable = (info.external_attr >> 16) & 0o111
            entries[info.filename] = (content, 0o755 if executable else 0o644)
    write_entries(wheel, entries, stamp, zipfile.ZIP_DEFLATED)


def build_wheel(root: Path, into: Path, stamp: int) -> Path:
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
        env = {**os.environ, "SOURCE_DATE_EPOCH": str(stamp), "PYTHONDONTWRITEBYTECODE": "1"}
        done = subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
             "--no-index", "-q", "-w", str(into), str(source)],
            capture_output=True, text=True, env=env)
        if done.returncode != 0:
            raise UsageError(tr("building the wheel failed: {output}",
                                output=done.stderr.strip()[-500:]))
    (wheel,) = into.glob("gpt_kata-*.whl")
    normalise_wheel(wheel, stamp)
    return wheel


def build_bundle(root: Path, out: Path, allow_unisolated: bool, seed: str = "",
                 late: LatePenalty | None = None, code: str = ENGLISH) -> tuple[str, str]:
    """Write the bundle of the checkout at `root` to `out`: the wheel's name, and
    where it was built from. `seed`, the instructor's, goes into run_autograder and
    self_test only, as do the late penalty and the language `code`."""
    built_from = origin(root)
    stamp = source_date(root)
    python, pins, torch = requirements(root)
    rest = "".join(f"{name}=={version}\n" for name, version in sorted(pins.items())
                   if name != "pip")
    setup = SETUP_SH.format(origin=built_from, venv=VENV, python=python,
                            pip=f"pip=={pins['pip']}", torch_index=TORCH_INDEX,
                            torch=f"torch=={torch}")
    run = run_script(allow_unisolated, seed, late, code=code)
    check = run_script(allow_unisolated, seed, late, self_test=True, code=code)
    with tempfile.TemporaryDirectory(prefix="gpt-kata-bundle-") as tmp:
        wheel = build_wheel(root, Path(tmp), stamp)
        entries = {"setup.sh": (setup.encode(), 0o755),
                   "run_autograder": (run.encode(), 0o755),
                   "self_test": (check.encode(), 0o755),
                   "requirements.txt": (rest.encode(), 0o644),
                   f"wheels/{wheel.name}": (wheel.read_bytes(), 0o644),
                   "VERSION": (f"{built_from}\n".encode(), 0o644)}
        if commit := git(root, "rev-parse", "HEAD"):
            # The commit alone, for the installed grader's provenance to name: VERSION
            # is for a reader, and names the repository too.
            entries[BUNDLE_COMMIT] = (f"{commit}\n".encode(), 0o644)
        partial = out.with_name(out.name + ".tmp")
        # Stored, not compressed again: the wheel already is, and no zlib's choices
        # can make two builds differ.
        write_entries(partial, entries, stamp, zipfile.ZIP_STORED)
        partial.replace(out)
    return wheel.name, built_from


def gradescope(args: argparse.Namespace) -> int:
    out = Path(args.out)
    if out.suffix != ".zip":
        raise UsageError(tr("--out {out}: Gradescope takes a .zip", out=out))
    if not out.parent.is_dir():
        raise UsageError(tr("--out {out}: there is no folder {parent}", out=out,
                            parent=out.parent))
    seed = instructor_seed()
    late = late_penalty(args)
    code = language()  # the class's: `gpt-kata --lang zh gradescope`
    wheel, built_from = build_bundle(checkout_root(), out, args.allow_unisolated, seed,
                                     late=late, code=code)
    print(tr("wrote {out}: setup.sh, run_autograder, self_test, requirements.txt and "
             "wheels/{wheel}, built from {built_from}", out=out, wheel=wheel,
             built_from=built_from))
    if code != ENGLISH:
        print(tr("learners read their results in {language}", language=LANGUAGES[code]))
    if late is not None:
        print(tr("a submission after its due date (a learner's extension counts) loses "
                 "{policy} of its score", policy=late.policy))
    if seed:  # never the seed itself: this line may be shown where learners see it
        print(tr("its drawn examples come from the instructor's seed set here "
                 "(GPT_KATA_EXAMPLES_SEED), which run_autograder holds: keep the bundle "
                 "from learners"))
    return EXIT_PASS


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("gradescope", help=tr("build a Gradescope autograder bundle (.zip); "
                                             "with GPT_KATA_EXAMPLES_SEED set, its grades "
                                             "draw their examples from that seed"))
    p.add_argument("--out", required=True, metavar="FILE.zip", help=tr("where the bundle goes"))
    p.add_argument("--allow-unisolated", action="store_true",
                   help=tr("grade even where Gradescope's container allows no sandbox "
                           "(default: refuse, and say so in results.json; the bundle's "
                           "self_test tells which it is before learners submit)"))
    add_late_penalty_options(p, tr(
        "take RATE of a late submission's points for each unit begun after its due date, "
        "e.g. 10%%/day, 2%%/h (default: none)"))
    p.set_defaults(run=gradescope)
