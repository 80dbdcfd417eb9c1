"""Drawn examples depend on the test and the instructor's seed alone: not on which
other modules the grading process has loaded (hypothesis' local constants)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

# Drawn as the checks draw (GRADING, seeded); many floats, so that hypothesis' chance
# of drawing a constant instead (a few per cent a value) comes up in every run.
DRAWS = """
from hypothesis import given, settings, strategies as st

def draws(decorate):
    seen = []

    def test(data):
        seen.append(tuple(data.draw(st.lists(st.floats(0.1, 2.0), min_size=20, max_size=20))))

    decorate(given(data=st.data())(test))()
    return seen
"""
# A module of the kind hypothesis reads constants from: not installed, not a test file.
CONSTANTS = "VALUES = {values!r}\n".format(values=[round(0.1 + i * 0.0093, 4)
                                                 for i in range(200)])


def load_constants(folder: Path) -> None:
    (folder / "constants_here.py").write_text(CONSTANTS, encoding="utf-8")
    sys.path.insert(0, str(folder))
    try:
        __import__("constants_here")
    finally:
        sys.path.remove(str(folder))


def test_without_the_grader_loaded_modules_change_the_examples(tmp_path: Path) -> None:
    """The control: hypothesis alone draws differently once such a module is loaded
    (so the next test could fail)."""
    from hypothesis.internal.conjecture import providers

    if not hasattr(providers, "_get_local_constants"):
        pytest.skip("this hypothesis draws no local constants")
    script = tmp_path / "alone.py"
    script.write_text(DRAWS + textwrap.dedent(f"""
        import sys
        decorate = settings(derandomize=True, max_examples=20, database=None)
        before = draws(decorate)
        sys.path.insert(0, {str(tmp_path)!r})
        import constants_here
        print(before == draws(decorate))
        """), encoding="utf-8")
    (tmp_path / "constants_here.py").write_text(CONSTANTS, encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          check=True, cwd=tmp_path, env={"PATH": "/usr/bin:/bin",
                                                         "HYPOTHESIS_NO_PLUGINS": "1"})
    assert done.stdout.strip() == "False"


def test_the_grader_draws_the_same_examples_whatever_is_loaded(tmp_path: Path) -> None:
    from grader.grading.subject import strategies

    namespace: dict = {}
    exec(DRAWS, namespace)  # noqa: S102 - the same drawing code as the control's

    def decorate(test):  # noqa: ANN001, ANN202
        return strategies.seeded(strategies.GRADING(test), "some-problem\0its examples")

    before = namespace["draws"](decorate)
    load_constants(tmp_path)
    assert namespace["draws"](decorate) == before


def test_hypothesis_keeps_its_caches_in_the_folder_the_grade_gives(tmp_path: Path) -> None:
    """A classroom grade starts in site-packages, whose entries the workers' Landlock
    rules grant one by one: hypothesis' `.hypothesis/` made there mid-grade left them
    unable to import what they had not imported yet, and the references of 17-35
    scored 60 of 350 on a fresh Gradescope install. While a grade runs, its caches go
    in the grade's scratch root (grade_problems), never where the grade started."""
    start, scratch = tmp_path / "start", tmp_path / "scratch"
    start.mkdir()
    code = textwrap.dedent(f"""
        from hypothesis.configuration import storage_directory
        from hypothesis.internal import charmap
        from grader.grading.subject.strategies import hypothesis_home_in
        with hypothesis_home_in({str(scratch / "hypothesis")!r}):
            charmap.charmap()  # writes its cache, as a drawn text does
        print(storage_directory().path)
        """)
    done = subprocess.run([sys.executable, "-c", code], cwd=start, capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert list(start.iterdir()) == []
    assert any((scratch / "hypothesis").rglob("charmap*")), list(scratch.rglob("*"))
    assert Path(done.stdout.strip()) == start / ".hypothesis"  # afterwards, as it was
