"""Learner-style submissions, graded end to end: equivalent styles pass, mistakes are named.

Each problem's grading folder holds, beside its check module, an `examples/`
folder of learner-style submissions and an `expected.toml` saying what each must
get. An equivalent style is a whole file or a patch of another submission,
the folder's base or another problem's (tests/learner_examples.py); a mistake
is mostly a patch of the base (see tests/patches.py). A patch is written out
under its name, so a report reads `argmax.py`, and graded like any file. The
folder's submissions are graded in a few grading processes (a few files each),
as `gpt-kata grade` would grade them, and every file is then checked on its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import grade_batch, messages, problem_of
from learner_examples import mistake_text, specs, text_of
from patches import PatchError

from grader.grading.values.failures import MISTAKE_ID

CHUNK = 5  # files per grading process: small enough to spread over the cores
# The tables of an expected.toml; its problem is the folder's (conftest.problem_of).
SPEC_KEYS = {"base", "equivalent", "mistakes", "elsewhere"}
MISTAKE_KEYS = {"says", "never", "patch", "file", "status", "mistake", "of"}
# A mistake fails its grade; one that leaves no check gradable at all (every check an
# error, such as parameters under other names) is the run status `error` instead.
MISTAKE_STATUSES = {"fail", "error"}
STYLE_KEYS = {"style", "patch", "of"}


@dataclass(frozen=True)
class Expectation:
    folder: Path
    problem: str
    name: str  # the file of an equivalent style; the name of a mistake
    passes: bool
    says: str = ""  # for a mistake, text its report must contain (else its id, `mistake`)
    never: str = ""  # and text it must not: the name of a mistake it could be taken for
    file: str | None = None  # a whole file in the folder
    patch: str | None = field(default=None, repr=False)  # else a patch of `base`
    base: str | None = None
    status: str = "fail"  # for a mistake, the run status its report must have
    mistake: str = ""  # and the id of the known mistake its report must name

    @property
    def id(self) -> str:
        # A mistake is graded as <name>.py: the id names that file.
        return f"{self.problem}/{self.file_name}"

    @property
    def file_name(self) -> str:
        return self.name if self.name.endswith(".py") else f"{self.name}.py"

    def materialise(self, tmp_path: Path) -> Path:
        """The file to grade: the whole file itself, or the patched base written out.

        A patch that no longer fits its base raises `PatchError`, naming the
        folder, the mistake and the line.
        """
        if self.patch is None:
            return self.folder / (self.file or self.name)
        text = (text_of(self.folder, self.name) if self.passes
                else mistake_text(self.folder, self.name))
        out = tmp_path / self.problem / self.file_name
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
        return out


def expectations() -> list[Expectation]:
    found = []
    for folder, spec in specs().items():
        problem, base = problem_of(folder), spec.get("base")
        for file, style in spec.get("equivalent", {}).items():
            patch = style.get("patch") if isinstance(style, dict) else None
            found.append(Expectation(folder, problem, file, passes=True, patch=patch,
                                     base=base if patch is not None else None))
        for name, mistake in spec.get("mistakes", {}).items():
            if not isinstance(mistake, dict):
                raise TypeError(f"{problem}/expected.toml: write mistake {name!r} as a "
                                "table with `says` and a `patch` or a `file`")
            found.append(Expectation(folder, problem, name, passes=False,
                                     says=mistake.get("says", ""), never=mistake.get("never", ""),
                                     file=mistake.get("file"),
                                     patch=mistake.get("patch"), base=base,
                                     status=mistake.get("status", "fail"),
                                     mistake=mistake.get("mistake", "")))
    return found


def chunks() -> list[list[Expectation]]:
    by_folder: dict[Path, list[Expectation]] = {}
    for expectation in expectations():
        by_folder.setdefault(expectation.folder, []).append(expectation)
    return [group[i:i + CHUNK] for group in by_folder.values()
            for i in range(0, len(group), CHUNK)]


CHUNKS = chunks()
PATCHED = [e for e in expectations() if e.patch is not None]


def test_every_submission_file_has_an_expectation() -> None:
    for folder, spec in specs().items():
        where = f"{folder.relative_to(folder.parents[2])}/expected.toml"
        assert set(spec) <= SPEC_KEYS, f"{where}: unknown keys {sorted(set(spec) - SPEC_KEYS)}"
        styles = spec.get("equivalent", {})
        equivalent = {name for name, style in styles.items() if not isinstance(style, dict)}
        whole, patched = set(), []
        for name, style in styles.items():
            if isinstance(style, dict):
                assert set(style) <= STYLE_KEYS and "patch" in style, \
                    f"{where}: style {name!r} needs a patch (and may say its style, " \
                    "and which submission it patches with `of`)"
                patched.append(name.removesuffix(".py"))
        for name, mistake in spec.get("mistakes", {}).items():
            assert set(mistake) <= MISTAKE_KEYS, f"{where}: {name!r} has unknown keys"
            # A named mistake is known by its id, which the report must carry; `says`
            # is for what else the report must say (a generic diagnosis, an error).
            assert mistake.get("says") or mistake.get("mistake"), \
                f"{where}: mistake {name!r} names no mistake (`mistake`) and says nothing"
            assert mistake.get("status", "fail") in MISTAKE_STATUSES, \
                f"{where}: mistake {name!r} has status {mistake.get('status')!r}"
            assert ("file" in mistake) != ("patch" in mistake), \
                f"{where}: mistake {name!r} needs a file or a patch, not both"
            named = mistake.get("mistake")
            assert named is None or (MISTAKE_ID.fullmatch(named)
                                     and named.startswith(f"{problem_of(folder)}/")), \
                f"{where}: mistake {name!r} names {named!r}, not <problem>/<kebab-case id>"
            if "file" in mistake:
                whole.add(mistake["file"])
            else:
                patched.append(name)
        if patched:
            assert spec.get("base") in styles, \
                f"{where}: the base of {patched} must be one of the equivalent styles"
        for name, partial in spec.get("elsewhere", {}).items():
            if isinstance(partial, dict):
                assert set(partial) <= STYLE_KEYS and "patch" in partial, \
                    f"{where}: partial submission {name!r} needs a patch"
                patched.append(name.removesuffix(".py"))
            else:
                whole.add(name)
        listed = equivalent | whole
        for file in listed:
            assert (folder / file).is_file(), f"{where} lists missing {file}"
        for file in folder.glob("*.py"):
            assert file.name in listed, f"{file} is in no expected.toml"
        for name in patched:
            # The patched file is written out as <name>.py: a file of that name here
            # would be a leftover, or make reports ambiguous.
            assert not (folder / f"{name}.py").exists(), \
                f"{folder / name}.py is also a patch in {where}"


def test_every_known_mistake_has_a_submission_that_makes_it() -> None:
    """Only a learner's file that makes a mistake shows, end to end, that its report
    names it: each known mistake of a check module has one here, by id (`mistake`) or
    by its name among the words a report must say (`says`)."""
    from grader.grading.contracts.declaring import load_check_module
    from grader.grading.values.failures import Mistake
    from grader.maintainer.catalogs import mistakes_in
    from grader.registry import problems

    ids: set[str] = set()
    said: dict[str, str] = {}
    for expectation in expectations():
        ids.add(expectation.mistake)
        said[expectation.problem] = said.get(expectation.problem, "") + expectation.says + "\n"
    missing = sorted({named.id for problem in problems()
                      for mistake in mistakes_in(load_check_module(problem), Mistake)
                      if (named := mistake.named(problem.slug)).id not in ids
                      and mistake.name not in said.get(problem.slug, "")})
    assert not missing, ("known mistakes with no learner-style submission in their "
                         "examples/expected.toml: " + ", ".join(missing))


@pytest.mark.parametrize("mistake", PATCHED, ids=[e.id for e in PATCHED])
def test_every_patch_applies(mistake: Expectation, tmp_path: Path) -> None:
    try:
        mistake.materialise(tmp_path)
    except PatchError as error:
        pytest.fail(str(error), pytrace=False)


def chunk_ids() -> list[str]:
    """`top-k-0`, `top-k-1`, ...: a chunk is named by its folder and its place there, so
    that adding a submission elsewhere renames no chunk (tests/tiers.py names some)."""
    seen: dict[str, int] = {}
    ids = []
    for group in CHUNKS:
        folder = group[0].problem
        ids.append(f"{folder}-{seen.get(folder, 0)}")
        seen[folder] = seen.get(folder, 0) + 1
    return ids


@pytest.mark.parametrize("group", CHUNKS, ids=chunk_ids())
def test_submissions_grade_as_expected(group: list[Expectation], tmp_path: Path,
                                       subtests) -> None:
    files: dict[Expectation, Path] = {}
    broken: dict[Expectation, str] = {}
    for expectation in group:
        try:
            files[expectation] = expectation.materialise(tmp_path)
        except PatchError as error:
            broken[expectation] = str(error)  # the others in the group are still graded
    reports = grade_batch([{"problem": e.problem, "file": f} for e, f in files.items()],
                          tmp_path) if files else []
    graded = dict(zip(files, reports, strict=True))
    for expectation in group:
        with subtests.test(msg=expectation.id):
            if expectation in broken:
                pytest.fail(broken[expectation], pytrace=False)
            report, says = graded[expectation], expectation.says
            if expectation.passes:
                assert report["status"] == "pass", messages(report)
            else:
                assert report["status"] == expectation.status, messages(report)
                assert says in messages(report), f"no {says!r} in:\n{messages(report)}"
                never = expectation.never
                assert not never or never not in messages(report), \
                    f"{never!r} in:\n{messages(report)}"
                named = mistake_ids(report)
                assert not expectation.mistake or expectation.mistake in named, \
                    f"{expectation.mistake} is not among the mistakes named: {sorted(named)}"


def mistake_ids(report: dict) -> set[str]:
    """The ids of the known mistakes a JSON report names."""
    return {t["mistake"]["id"] for t in report.get("tests", []) if t.get("mistake")}


def test_styles_that_patch_each_other_in_a_circle_are_refused_by_name(monkeypatch) -> None:
    import learner_examples
    def folder(slug: str) -> Path:
        return Path(f"/nowhere/{slug}/examples")
    one_line = " return x\n+# changed\n"
    monkeypatch.setattr(learner_examples, "examples", folder)
    monkeypatch.setattr(learner_examples, "specs", lambda: {
        folder("a"): {"equivalent": {"x.py": {"patch": one_line, "of": "b/y.py"}}},
        folder("b"): {"equivalent": {"y.py": {"patch": one_line, "of": "a/x.py"}}}})
    with pytest.raises(PatchError, match=r"in a circle: a/x.py -> b/y.py -> a/x.py"):
        learner_examples.text_of(folder("a"), "x.py")
    monkeypatch.setattr(learner_examples, "specs", lambda: {
        folder("a"): {"equivalent": {"x.py": {"patch": one_line, "of": "c/z.py"}}}})
    with pytest.raises(PatchError, match=r"`of` names 'c/z.py', not a problem with examples"):
        learner_examples.text_of(folder("a"), "x.py")


def test_a_mistake_whose_of_names_no_problem_is_refused_by_name(monkeypatch) -> None:
    """As a style's: a PatchError, which the grading test reports for that mistake
    alone, not a KeyError that stops the whole chunk."""
    import learner_examples

    def folder(slug: str) -> Path:
        return Path(f"/nowhere/{slug}/examples")
    monkeypatch.setattr(learner_examples, "examples", folder)
    monkeypatch.setattr(learner_examples, "specs", lambda: {
        folder("a"): {"base": "x.py", "mistakes": {
            "slip": {"patch": " return x\n+# changed\n", "of": "c/z.py"}}}})
    with pytest.raises(PatchError, match=r"a/expected.toml: mistake 'slip': `of` names "
                                         r"'c/z.py', not a problem with examples"):
        learner_examples.mistake_text(folder("a"), "slip")


def test_a_patch_that_no_longer_fits_deep_in_a_chain_is_named_once(monkeypatch,
                                                                    tmp_path) -> None:
    """x patches y, y patches the base, and y no longer fits: the error names y and
    its base once, not every style of the chain above it."""
    import learner_examples

    def folder(slug: str) -> Path:
        return tmp_path / slug / "examples"
    folder("b").mkdir(parents=True)
    (folder("b") / "base.py").write_text("def f():\n    return x\n", encoding="utf-8")
    monkeypatch.setattr(learner_examples, "examples", folder)
    monkeypatch.setattr(learner_examples, "specs", lambda: {
        folder("a"): {"equivalent": {"x.py": {"patch": " return y\n+# a\n", "of": "b/y.py"}}},
        folder("b"): {"base": "base.py",
                      "equivalent": {"y.py": {"patch": " return z\n+# b\n"}}}})
    with pytest.raises(PatchError) as raised:
        learner_examples.text_of(folder("a"), "x.py")
    message = str(raised.value)
    assert message.startswith("b/expected.toml: style 'y.py' no longer applies to b/base.py: "
                              "hunk 1"), message
    assert "a/expected.toml" not in message and message.count("no longer applies") == 1


def test_a_patched_style_named_without_py_is_written_out_as_a_py_file(tmp_path) -> None:
    from learner_examples import example
    for folder, spec in specs().items():
        for name, style in spec.get("equivalent", {}).items():
            if isinstance(style, dict) and not name.endswith(".py"):
                written = example(problem_of(folder), name, tmp_path)
                assert written.name == f"{name}.py" and written.is_file(), written
                return
    pytest.fail("no patched style is named without .py: this test checks nothing")


def test_a_style_or_a_mistake_is_written_out_to_grade_by_hand(tmp_path: Path, capsys) -> None:
    """`python tests/learner_examples.py PROBLEM NAME`: a contributor's way to a file."""
    from learner_examples import main

    assert main(["gpt", "logits_and_loss", "-o", str(tmp_path)]) == 0
    written = Path(capsys.readouterr().out.strip())
    assert written == tmp_path / "gpt" / "logits_and_loss.py"
    assert "return logits, None" in written.read_text(encoding="utf-8")
    assert main(["gpt", "sequential_blocks", "-o", str(tmp_path)]) == 0
    assert "nn.Sequential" in Path(capsys.readouterr().out.strip()).read_text(encoding="utf-8")
