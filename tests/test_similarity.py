"""`gpt-kata similarity`: a small class with two near-copies (renamed variables), an
independent solution and an untouched starter, compared by copydetect."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import pytest

from grader import paths
from grader.cli.main import main

PROBLEM = "12-no-repeat-ngram"
STARTER = (paths.STARTERS / PROBLEM / "solution.py").read_text(encoding="utf-8")
SIGNATURE = STARTER.split("        raise NotImplementedError")[0].replace(
    "from torchtyping", "import torch\nfrom torchtyping")

# One learner's solution, and a second learner's copy of it with every name changed and
# a comment added: the filtered tokens are the same.
ORIGINAL = SIGNATURE + """\
        rows = token_ids.tolist() if logits.dim() == 2 else [list(token_ids)]
        banned = torch.zeros(len(rows), logits.shape[-1], dtype=torch.bool)
        for row, ids in enumerate(rows):
            start = len(ids) - (n - 1)
            for i in range(max(start, 0)):
                if ids[i:i + n - 1] == ids[start:]:
                    banned[row, ids[i + n - 1]] = True
        return logits.masked_fill(banned.view(logits.shape), float("-inf"))
"""
RENAMED = (ORIGINAL.replace("rows", "texts").replace("banned", "mask")
           .replace("ids", "seq").replace("start", "s0")
           .replace("        return logits", "        # done\n        return logits"))
# Written another way: a table of what follows each (n - 1)-gram.
INDEPENDENT = SIGNATURE + """\
        out = logits.clone()
        flat = out.view(-1, out.shape[-1])
        batch = token_ids if logits.dim() == 2 else torch.tensor([token_ids])
        for b in range(flat.shape[0]):
            seen = {}
            toks = batch[b].tolist()
            for j in range(len(toks) - n + 1):
                key = tuple(toks[j:j + n - 1])
                seen.setdefault(key, set()).add(toks[j + n - 1])
            tail = tuple(toks[len(toks) - n + 1:]) if n > 1 else ()
            for t in seen.get(tail, ()):
                flat[b, t] = float("-inf")
        return out
"""
# A third way: each row of the result banned in place.
THIRD = SIGNATURE + """\
        result = logits.clone()
        if logits.dim() == 1:
            histories, views = [list(token_ids)], [result]
        else:
            histories, views = token_ids.tolist(), list(result)
        for history, view in zip(histories, views):
            if len(history) < n - 1:
                continue
            prefix = history[len(history) - n + 1:] if n > 1 else []
            for k in range(len(history) - n + 1):
                if history[k:k + n - 1] == prefix:
                    view[history[k + n - 1]] = float("-inf")
        return result
"""
# A folder name a learner chose to attack whoever reads the report.
HOSTILE = "<img src=x onerror=alert(1)>\x1b[2J"


def learner(roster: Path, name: str, code: str) -> Path:
    file = roster / name / "problems" / PROBLEM / "solution.py"
    file.parent.mkdir(parents=True)
    file.write_text(code, encoding="utf-8")
    return file


def similarity_rows(out: Path) -> list[dict[str, str]]:
    with (out / "similarity.csv").open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture
def graded_class(tmp_path: Path) -> tuple[Path, list[dict[str, str]]]:
    pytest.importorskip("copydetect")
    roster = tmp_path / "roster"
    learner(roster, "ada", ORIGINAL)
    learner(roster, "bo", RENAMED)
    learner(roster, "cy", INDEPENDENT)
    learner(roster, "di", STARTER)
    # A link to another learner's file is not their own: the gradebook's reading skips it.
    linked = roster / "eve" / "problems" / PROBLEM
    linked.mkdir(parents=True)
    (linked / "solution.py").symlink_to(roster / "ada" / "problems" / PROBLEM / "solution.py")
    learner(roster, HOSTILE, THIRD)
    out = tmp_path / "out"
    assert main(["similarity", str(roster), PROBLEM, "--out", str(out), "-q"]) == 0
    return out, similarity_rows(out)


def pair(row: dict[str, str]) -> set[str]:
    return {row["learner_a"], row["learner_b"]}


def test_the_copied_pair_ranks_first(graded_class) -> None:
    _out, rows = graded_class
    assert all(row["problem"] == PROBLEM for row in rows)
    assert pair(rows[0]) == {"ada", "bo"}
    assert rows[0]["rank"] == "1"
    assert float(rows[0]["similarity"]) > 0.9
    # the independent solution is far below the copy
    independent = [r for r in rows if pair(r) in ({"ada", "cy"}, {"bo", "cy"})]
    assert len(independent) == 2
    assert all(float(r["similarity"]) < 0.5 for r in independent)


def test_the_starters_own_code_scores_nothing(graded_class) -> None:
    _out, rows = graded_class
    with_starter = [r for r in rows if "di" in pair(r)]
    assert len(with_starter) == 4  # against ada, bo, cy and the hostile name
    assert all(float(r["similarity"]) <= 0.02 for r in with_starter)


def test_the_roster_is_read_as_the_gradebook_reads_it(graded_class) -> None:
    out, rows = graded_class
    names = {name for r in rows for name in pair(r)}
    assert "eve" not in names  # a link out of their own folder is not taken
    assert len(names) == 5
    assert not (out / "sources" / PROBLEM / "eve.py").exists()


def test_hostile_names_are_shown_as_visible_escapes(graded_class) -> None:
    out, rows = graded_class
    names = {name for r in rows for name in pair(r)}
    # The CSV cell: escape sequence visible, and a leading "<" is no formula start.
    assert "<img src=x onerror=alert(1)>\\x1b[2J" in names
    html = (out / f"{PROBLEM}.html").read_text(encoding="utf-8")
    assert "<img src=x" not in html
    assert "\x1b" not in html
    markdown = (out / "similarity.md").read_text(encoding="utf-8")
    assert "<img" not in markdown
    assert "&lt;img src=x onerror=alert\\(1\\)&gt;\\\\x1b\\[2J" in markdown


def test_the_reports_are_written(graded_class) -> None:
    out, rows = graded_class
    markdown = (out / "similarity.md").read_text(encoding="utf-8")
    assert f"## {PROBLEM}" in markdown
    assert "| 1 | ada | bo |" in markdown
    assert "1 learner handed in the starter unchanged" in markdown
    html = (out / f"{PROBLEM}.html").read_text(encoding="utf-8")
    # copydetect's side-by-side view shows the copied pair (above the 0.5 threshold)
    assert "ada.py" in html and "bo.py" in html
    assert len(rows) == 10  # every pair of the five learners whose files were taken


def test_a_problem_without_code_in_common_gets_no_table_on_the_terminal(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Three learners who solved one problem, the others' starters untouched: an
    instructor read a table of 0% for every problem of the kata."""
    pytest.importorskip("copydetect")
    roster = tmp_path / "roster"
    crop = "01-crop-context"
    for name, code in (("ada", ORIGINAL), ("bo", RENAMED), ("cy", INDEPENDENT)):
        learner(roster, name, code)
        starter = roster / name / "problems" / crop / "solution.py"
        starter.parent.mkdir(parents=True)
        starter.write_text((paths.STARTERS / crop / "solution.py").read_text())
    out = tmp_path / "out"
    assert main(["similarity", str(roster), PROBLEM, crop, "--out", str(out),
                 "--no-html"]) == 0
    shown = capsys.readouterr().out
    assert PROBLEM in shown and crop not in shown, shown
    assert "1 problem with no code in common between any two learners" in shown
    assert {row["problem"] for row in similarity_rows(out)} == {PROBLEM, crop}


def test_without_copydetect_one_line_says_how_to_install_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    monkeypatch.setitem(sys.modules, "copydetect", None)  # import copydetect now fails
    roster = tmp_path / "roster"
    learner(roster, "ada", ORIGINAL)
    code = main(["similarity", str(roster), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2
    assert len(err.strip().splitlines()) == 1
    assert 'pip install "gpt-kata[class]"' in err
    assert not (tmp_path / "out").exists()


def test_copydetect_is_an_extra_a_learner_does_not_install() -> None:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    assert not any(d.startswith("copydetect") for d in project["dependencies"])
    assert any(d.startswith("copydetect") for d in project["optional-dependencies"]["class"])
