"""The learners' copy (`gpt-kata release`): reproducible, free of reference code, and its
practice grader fails the starters, passes the references and names known mistakes."""

from __future__ import annotations

import ast
import contextlib
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import types
from copy import deepcopy
from pathlib import Path
from types import ModuleType

import pytest
from conftest import COPY_ONLY, example_folders, examples, imported_afresh, problem_of
from filelock import FileLock
from learner import learner_kata
from learner_examples import example, mistake_text, mistake_words, specs
from misfits import misfits

from grader import paths
from grader.grading.subject.examples_seed import SEED_VARIABLE
from grader.learner.grade import NOT_IN_A_COPY
from grader.registry import problems
from grader.release.build import PACKAGE, contracts_of, write_release

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

# Code whose definitions are answers: the references, the grader's own GPT (problem
# 23's answer), the knobbed computations that name mistakes, and the check modules,
# which hold the mistakes' runs and the judges (a judge can compute the answer), with the
# modules they keep beside them (bpe's tokenizer, stream's word streamer).
REFERENCE_CODE = sorted(
    [*paths.SOLUTIONS.glob("*/solution.py"),
     paths.PACKAGE / "model" / "gpt.py",
     paths.PACKAGE / "grading" / "subject" / "transformer.py",
     paths.PACKAGE / "grading" / "subject" / "mistakes.py",
     paths.PACKAGE / "grading" / "judging" / "any_result.py",
     paths.PACKAGE / "grading" / "judging" / "generated_text.py",
     paths.PACKAGE / "grading" / "judging" / "filtered_logits.py",
     *paths.CHECKS.rglob("*.py")])
# A statement this short (`return x`, `x = x.clone()`) is no one's answer.
SHORTEST_STATEMENT = 40


# An instructor's seed for the drawn examples, set while the second copy is written:
# the copy must neither hold it nor change with it.
INSTRUCTOR_SEED = "8263519047"
# The problems a learners' copy cannot practise yet, each saying why in one line.
# This list may only shrink: a new problem is practised, or added here on purpose.
NOT_PRACTISED: set[str] = set()
# The methods of practised problems that the copy cannot practise, which its grade names
# in a line each: stream_generate() is judged by how it calls the model, beside
# WordStreamer, practised. This list may only shrink too.
NOT_PRACTISED_IN_PART = {"stream": {"stream_generate"}}


@pytest.fixture(scope="session")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The learners' copy as written, with an instructor's seed set (the copy must
    neither hold it nor change with it); nothing runs in it. Under pytest-xdist the
    test processes share it, as writing it takes minutes: the first to need it writes
    it while the others wait."""
    base = tmp_path_factory.getbasetemp()
    # Under xdist every worker has a folder of its own inside one for the whole run.
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    copy = shared / "written"
    with FileLock(str(shared / "written.lock")):
        if not copy.is_dir():
            # Written aside and renamed once whole: a process that failed halfway
            # leaves the next one nothing half written to take for the copy.
            partial = written_copy(tmp_path_factory.mktemp("writing"))
            partial.rename(copy)
    return copy


@pytest.fixture(scope="session")
def released(written: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The copy this test process's tests run commands in: a grade there remembers its
    status in the copy (.gpt-kata/), as a learner's does, which no other process sees."""
    copy = tmp_path_factory.mktemp("released") / "copy"
    shutil.copytree(written, copy)
    return copy


def written_copy(folder: Path) -> Path:
    before = os.environ.get(SEED_VARIABLE)
    os.environ[SEED_VARIABLE] = INSTRUCTOR_SEED
    try:
        write_release(folder)
    finally:
        if before is None:
            del os.environ[SEED_VARIABLE]
        else:
            os.environ[SEED_VARIABLE] = before
    return folder


def digests(folder: Path) -> dict[str, str]:
    return {path.relative_to(folder).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(folder.rglob("*")) if path.is_file()}


def test_two_releases_are_the_same_byte_for_byte(request: pytest.FixtureRequest,
                                                 tmp_path: Path) -> None:
    """The first was written with an instructor's seed set, this one by `gpt-kata release`
    without: the copy does not change with it, so its drawn examples are not the ones that
    seed draws."""
    again = tmp_path / "again"
    env = {k: v for k, v in os.environ.items() if k != SEED_VARIABLE}
    done = subprocess.run([sys.executable, "-m", "grader", "release", str(again), "-q"],
                          cwd=paths.ROOT, capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    # Asked for only now: another test process may be writing it meanwhile, instead of
    # this one waiting for it before writing its own.
    written = request.getfixturevalue("written")
    assert digests(again) == digests(written)
    assert f"{PACKAGE}/cases.json" in digests(written)


def test_the_copy_holds_no_instructor_seed(written: Path) -> None:
    for path in sorted(written.rglob("*")):
        if path.is_file():
            data = path.read_bytes()
            assert INSTRUCTOR_SEED.encode() not in data, path
            assert SEED_VARIABLE.encode() not in data, path


def test_every_problem_is_practised_or_says_why_in_one_line(released: Path) -> None:
    stored = cases_of(released)
    slugs = [p.slug for p in problems()]
    assert sorted([*stored["problems"], *stored["not_practised"]]) == sorted(slugs)
    assert set(stored["not_practised"]) == NOT_PRACTISED & set(slugs)
    in_part = {slug: p["not_practised"] for slug, p in stored["problems"].items()
               if "not_practised" in p}
    assert {slug: set(left) for slug, left in in_part.items()} == {
        slug: left for slug, left in NOT_PRACTISED_IN_PART.items() if slug in slugs}
    lines = practice_grade(released, *sorted([*stored["not_practised"], *in_part])
                           ).stdout.splitlines()
    by_slug = {p.slug: p for p in problems()}
    for slug, why in stored["not_practised"].items():
        said = [x for x in lines if f" {by_slug[slug].folder}:" in x]
        assert said == [f"? {by_slug[slug].folder}: not practised here: {why}"], lines
        assert why and "\n" not in why
    for left in in_part.values():
        for method, why in left.items():
            assert lines.count(f"  ? {method}() is not practised here: {why}") == 1, lines
            assert why and "\n" not in why


def test_practised_problems_hold_drawn_examples(released: Path) -> None:
    """Drawn as the checks draw them, with answers and named mistakes of their own."""
    stored = cases_of(released)["problems"]
    with_examples = [slug for slug, p in stored.items() if all(c["examples"] for c in p["parts"])]
    assert len(with_examples) == len(stored), sorted(set(stored) - set(with_examples))
    assert any(e["mistakes"] for p in stored.values() for c in p["parts"]
               for e in c["examples"].values())
    # Those that show mistakes, not hypothesis's simplest first draws: each of 06's
    # generates characters (an empty generation shows no mistake of the loop).
    for drawn in stored["generate"]["parts"][0]["examples"].values():
        assert len(drawn["mistakes"]) >= 5, drawn["mistakes"]
    models = sorted(p.name for p in (released / PACKAGE / "models").iterdir())
    assert "shipped.safetensors" in models and any(m.startswith("random-") for m in models)


def test_stored_mistakes_carry_the_full_graders_ids(released: Path) -> None:
    """Each stored mistake has the id the full grader's JSON report gives it
    (<slug>/<its name in kebab case>), so a practice report names it alike."""
    from grader.grading.contracts.declaring import load_check_module
    from grader.grading.values.failures import MISTAKE_ID

    by_slug = {p.slug: p for p in problems()}
    seen = 0
    for slug, stored in cases_of(released)["problems"].items():
        module = load_check_module(by_slug[slug])
        ids = {m.named(slug).id: m.name for c in contracts_of(module) for m in c.mistakes}
        for case in [case for part in stored["parts"]
                     for case in [*part["cases"].values(), *part["examples"].values()]]:
            for mistake in case["mistakes"]:
                assert MISTAKE_ID.fullmatch(mistake["id"]), mistake["id"]
                assert ids.get(mistake["id"]) == mistake["name"], (slug, mistake["id"])
                seen += 1
    assert seen > 100


def test_the_copy_holds_statements_starters_and_data(released: Path) -> None:
    copy = released
    for problem in problems():
        folder = copy / "problems" / problem.folder
        assert (folder / "README.md").read_bytes() == (
            paths.ROOT / "problems" / problem.folder / "README.md").read_bytes()
        assert (folder / "solution.py").read_bytes() == (
            paths.STARTERS / problem.folder / "solution.py").read_bytes()
    for name in ("corpus.txt", "vocab.json", "config.json", "model.safetensors"):
        assert (copy / "data" / name).read_bytes() == (paths.DATA / name).read_bytes()
    assert "practice grade" in (copy / "README.md").read_text(encoding="utf-8")


def test_every_folder_of_the_copy_with_code_is_packaged(released: Path) -> None:
    # A folder left out installs in editable mode (its parent's path is searched) and
    # is missing from `pip install .`: the command it holds then fails to import.
    config = tomllib.loads((released / "pyproject.toml").read_text(encoding="utf-8"))
    listed = set(config["tool"]["setuptools"]["packages"])
    with_code = {".".join(p.parent.relative_to(released).parts)
                 for top in ("grader", PACKAGE) for p in (released / top).rglob("*.py")}
    assert with_code <= listed, f"add to the copy's packages: {with_code - listed}"


def test_no_file_of_the_references_is_in_the_copy(released: Path) -> None:
    copy = released
    answers = {hashlib.sha256(p.read_bytes()).hexdigest(): p for p in REFERENCE_CODE}
    for relative, digest in digests(copy).items():
        assert digest not in answers, f"{relative} is {answers[digest]}"
        assert "solutions" not in relative.split("/")
        # Only text and tensors: no pickles, TorchScript or archives that could carry code.
        # (.safetensors: weights, and a model's graph as JSON, practice/program.py.)
        # (.po: the kata's translations, gettext's text catalogs.)
        # (.gitignore: the patterns git keeps out of the learner's repository.)
        assert (Path(relative).suffix in {".md", ".py", ".toml", ".json", ".txt", ".safetensors",
                                          ".po"} or relative == ".gitignore"), relative


def test_the_copy_carries_both_languages(released: Path) -> None:
    """Every statement in Chinese beside the English, and the copy's commands speak it."""
    for statement in sorted((released / "problems").glob("*/README.md")):
        chinese = statement.with_name("README.zh.md")
        assert chinese.is_file(), f"{chinese.relative_to(released)} is missing"
        assert chinese.read_bytes() == (paths.ROOT / "problems" / statement.parent.name /
                                        "README.zh.md").read_bytes()
    catalogs = sorted(p.name for p in (released / "grader" / "locale" / "zh").glob("*.po"))
    assert catalogs == ["checks.po", "messages.po", "mistakes.po", "problems.po"]
    code = (COPY_ONLY +
            "from grader.cli.main import main; sys.exit(main(sys.argv[1:]))")
    listed = subprocess.run([sys.executable, "-I", "-B", "-c", code, "--lang", "zh", "list"],
                            cwd=released, capture_output=True, text=True, encoding="utf-8",
                            check=False)
    assert listed.returncode == 0, listed.stderr
    assert "截断上下文" in listed.stdout and "README.zh.md" in listed.stdout, listed.stdout
    # argparse's own words too (grader/locale/parsers.py, in the copy's runtime)
    mistyped = subprocess.run([sys.executable, "-I", "-B", "-c", code, "--lang", "zh", "list",
                               "extra"], cwd=released, capture_output=True, text=True,
                              encoding="utf-8", check=False)
    assert mistyped.returncode == 2, mistyped.stderr
    assert mistyped.stderr.startswith("用法：gpt-kata"), mistyped.stderr
    assert "gpt-kata：错误：无法识别的参数：extra" in mistyped.stderr, mistyped.stderr


def test_the_models_are_graphs_without_source(released: Path) -> None:
    """The shipped GPT (with its blocks' attention and MLP, for the statements' examples),
    the random ones, their forward_with_cache where problem 15 runs it, and the trainable
    ones the training cases train, as graphs of torch operations: never the modern model."""
    from grader.release.practice.program import read_graph

    programs = sorted((released / PACKAGE / "models").glob("*.safetensors"))
    names = [program.name for program in programs]
    assert "shipped.safetensors" in names and any(n.startswith("trainable-") for n in names), (
        names)
    source = (paths.PACKAGE / "model" / "gpt.py").read_text(encoding="utf-8")
    lines = {line.strip() for line in source.splitlines() if len(line.strip()) >= 20}
    for program in programs:
        held = program.read_bytes()
        assert b"aten." in held  # torch operations, not Python
        assert any(True for _ in read_graph(program).parameters()), program.name
        for forbidden in (b"gpt.py", b"stack_trace", str(paths.ROOT).encode(),
                          *(line.encode() for line in lines)):
            assert forbidden not in held, (program.name, forbidden)
        # What a program reveals is the GPT that statements 17-23 fix word for word,
        # never the modern decoder that track 4 asks for (the threat model's decision):
        # no SwiGLU, RMSNorm or rotation is in any graph.
        for modern in (b"aten.silu", b"aten.rsqrt", b"aten.cos", b"aten.sin"):
            assert modern not in held, (program.name, modern)
        assert re.fullmatch(r"(shipped|random-\w+)(\.cached-(first|next)-(one|many))?|"
                            r"shipped\.blocks\.\d+\.(attn|mlp)|trainable-\w+", program.stem), (
            program.stem)


def statements(source: str, skip: frozenset[str] = frozenset()) -> set[str]:
    """Every statement in a function body, but docstrings and short ones, normalised
    (the AST without positions, so layout, comments and quotes do not hide it), and
    none of the functions named in `skip`."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.name in skip:
            continue
        for statement in ast.walk(node):
            if not isinstance(statement, ast.stmt) or isinstance(
                    statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
                continue  # a docstring
            text = ast.unparse(statement)
            if len(text) >= SHORTEST_STATEMENT:
                found.add(ast.dump(statement))
    return found


def test_no_statement_of_the_reference_code_is_in_the_copy(released: Path) -> None:
    """A statement of an answer's body may be in the copy only where a starter gives it
    away already (a starter's seeded generator, say)."""
    copy = released
    given = set().union(*(statements((paths.STARTERS / p.folder / "solution.py").read_text(
        encoding="utf-8")) for p in problems()))
    answers = {}
    for path in REFERENCE_CODE:
        code = path.read_text(encoding="utf-8")
        for statement in statements(code) - given:
            answers.setdefault(statement, path)
    assert len(answers) > 500  # the standard has something to compare with
    for path in sorted(copy.rglob("*.py")):
        leaked = statements(path.read_text(encoding="utf-8")) & answers.keys()
        assert not leaked, (f"{path.relative_to(copy)} holds code of "
                            f"{sorted({str(answers[s]) for s in leaked})}")


def practice_grade(copy: Path, *names: str) -> subprocess.CompletedProcess[str]:
    """The copy's grader, run as a learner runs it, with the kata's own grader out of reach."""
    code = (COPY_ONLY +
            "from grader.cli.main import main; sys.exit(main(sys.argv[1:]))")
    # -B: no __pycache__ left in the copy, which the tests look through file by file.
    return subprocess.run([sys.executable, "-I", "-B", "-c", code, "grade", *names], cwd=copy,
                          capture_output=True, text=True, encoding="utf-8", check=False)


def cases_of(copy: Path) -> dict:
    return json.loads((copy / PACKAGE / "cases.json").read_text("utf-8"))


def practised(copy: Path) -> list[str]:
    return list(cases_of(copy)["problems"])


def test_a_modules_known_weights_are_said_by_where_they_come_from(written: Path) -> None:
    """As the kata says them: the copy stores the weights' tensors, whose every bias value
    its failures printed, where the kata names the part of the shipped model they are."""
    head = cases_of(written)["problems"]["attention-head"]["parts"][0]["cases"]["a-sentence"]
    assert ("weights: attention head number 0 of blocks.0.attn of the shipped model (its "
            "rows of qkv as query, key and value)") in head["shown"]["en"]
    assert "blocks.0.attn" in " ".join(head["shown"]["zh"])


def test_the_starters_fail_as_not_implemented(released: Path) -> None:
    copy = released
    graded = practice_grade(copy)
    assert graded.returncode == 1, graded.stderr
    lines = graded.stdout.splitlines()
    by_slug = {p.slug: p for p in problems()}
    assert len(practised(copy)) == len(by_slug)
    for slug in practised(copy):
        line = next(x for x in lines if x.startswith(f"✗ {by_slug[slug].folder} "))
        assert "not implemented yet" in line, line
    assert f"0/{len(practised(copy))} problems pass" in graded.stdout, graded.stdout
    assert "next: problems/01-crop-context/README.md" in graded.stdout, graded.stdout
    assert "practice grade" in graded.stdout
    # Said first, as the kata's grade does: a whole grade showed nothing for seconds.
    assert lines[0] == f"gpt-kata grading {len(by_slug)} problems from problems/", lines[:2]


LEARNER_COMMANDS = ("list", "grade", "watch", "hint", "reset", "trace", "talk", "train")


def copy_command(copy: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """A command of the copy's, or with "-c-script FILE" a script, run in the copy with
    its own grader."""
    code = COPY_ONLY + "from grader.cli.main import main; sys.exit(main(sys.argv[1:]))"
    if args[:1] == ("-c-script",):
        code = COPY_ONLY + Path(args[1]).read_text(encoding="utf-8")
        args = ()
    return subprocess.run([sys.executable, "-I", "-B", "-c", code, *args], cwd=copy,
                          capture_output=True, text=True, encoding="utf-8", check=False)


def test_every_learner_command_is_the_kata_s_own(released: Path) -> None:
    """The copy's gpt-kata is the kata's command line: each learner command with the
    same options; those that run the reference code say in one line what they need."""
    # Each command's help leaves out the options the copy refuses or has no sandbox
    # for; train's says what the copy trains (the learner's own models, unsandboxed),
    # talk's what talks there (no GPT of the grader's).
    hidden = {"grade": {"--" + name.replace("_", "-") for name in NOT_IN_A_COPY},
              "trace": {"--steps", "--seed", "--reference"}}
    helps = {}
    for command in LEARNER_COMMANDS:
        copied = copy_command(released, command, "--help")
        kata = subprocess.run([sys.executable, "-m", "grader", command, "--help"],
                              capture_output=True, text=True, encoding="utf-8", check=False)
        assert copied.returncode == kata.returncode == 0, copied.stderr
        helps[command] = copied.stdout
        if command not in (*hidden, "train", "talk"):
            assert copied.stdout == kata.stdout, command
            continue
        options = {text: set(re.findall(r"--[a-z][a-z-]*", text))
                   for text in (copied.stdout, kata.stdout)}
        assert options[copied.stdout] == options[kata.stdout] - hidden.get(command, set())
        assert all(option in kata.stdout for option in hidden.get(command, ()))
    assert "PROMPT" not in helps["trace"] and "sandbox" not in helps["train"]
    assert "grader's GPT" not in helps["talk"] and "sample_text" in helps["talk"]
    # (talk's, trace's and train's refusals are tried on copies of the copy and in tests
    # of their own: those commands grade the files they run.)
    assert "gradebook" not in copy_command(released, "--help").stdout
    version = copy_command(released, "--version")
    assert version.returncode == 0 and version.stdout.startswith("gpt-kata 0."), version


def test_talk_writes_through_the_learners_sampler_in_the_copy(released: Path,
                                                               tmp_path: Path) -> None:
    """In the copy, talk runs the learner's sample_text() (problem 16) on the shipped
    GPT's exported program: refused, in one line, until it passes; then it writes."""
    copy = tmp_path / "learner"
    shutil.copytree(released, copy)
    waiting = copy_command(copy, "talk")
    assert waiting.returncode == 2 and "sample_text()" in waiting.stderr, waiting.stderr
    sampler = next(p for p in problems() if p.slug == "sampler")
    shutil.copyfile(sampler.reference, copy / "problems" / sampler.folder / "solution.py")
    assert copy_command(copy, "grade", "sampler").returncode == 0
    talked = copy_command(copy, "talk", "Once upon a time,", "--chars", "60", "--seed", "7")
    assert talked.returncode == 0, talked.stderr
    assert talked.stdout.startswith("Once upon a time,")
    assert len(talked.stdout.rstrip("\n")) == len("Once upon a time,") + 60
    assert f"your sample_text() from {sampler.folder}" in talked.stderr
    again = copy_command(copy, "talk", "Once upon a time,", "--chars", "60", "--seed", "7")
    assert again.stdout == talked.stdout  # one seed, one text


def test_talk_yours_and_streamed_in_the_copy(released: Path, tmp_path: Path) -> None:
    """In the copy, `--yours` writes the same text through the learner's own GPT as the
    shipped GPT's program writes, `--stream word` the same text through their
    WordStreamer, and `--model modern --yours` runs the modern weights through their
    Llama; the shipped modern model alone and a trained run are refused in one line."""
    copy = tmp_path / "learner"
    shutil.copytree(released, copy)
    by_slug = {p.slug: p for p in problems()}
    for slug in ("sampler", "stream", "gpt", "modern-gpt"):
        shutil.copyfile(by_slug[slug].reference,
                        copy / "problems" / by_slug[slug].folder / "solution.py")
    talk = ("talk", "Once upon a time,", "--chars", "80", "--seed", "7")
    plain = copy_command(copy, *talk)
    assert plain.returncode == 0, plain.stderr
    yours = copy_command(copy, *talk, "--yours")
    assert yours.returncode == 0, yours.stderr
    assert yours.stdout == plain.stdout
    assert f"your GPT from {by_slug['gpt'].folder}" in yours.stderr
    streamed = copy_command(copy, *talk, "--stream", "word")
    assert streamed.stdout == plain.stdout, streamed.stderr
    assert f"your WordStreamer from {by_slug['stream'].folder}" in streamed.stderr
    modern = copy_command(copy, *talk, "--model", "modern", "--yours")
    assert modern.returncode == 0, modern.stderr
    assert f"your Llama from {by_slug['modern-gpt'].folder}" in modern.stderr
    assert modern.stdout.startswith("Once upon a time,") and modern.stdout != plain.stdout
    assert "Warning" not in plain.stderr + yours.stderr + modern.stderr
    for refused, needed in ((("--model", "modern"), "--yours"),
                            (("--model", str(tmp_path / "run")), "add --yours")):
        said = copy_command(copy, *talk, *refused)
        assert said.returncode == 2 and needed in said.stderr, said.stderr
        assert len(said.stderr.strip().splitlines()) == 1, said.stderr


def test_the_copy_talks_as_the_kata_does(released: Path, tmp_path: Path) -> None:
    """One seed, one text: the copy's talk (the shipped GPT's exported program, through
    the reference as the learner's sampler) writes what the kata's talk writes."""
    copy = tmp_path / "learner"
    shutil.copytree(released, copy)
    sampler = next(p for p in problems() if p.slug == "sampler")
    shutil.copyfile(sampler.reference, copy / "problems" / sampler.folder / "solution.py")
    talk = ("talk", "The cat", "--chars", "120", "--seed", "3", "--temperature", "0.8")
    copied = copy_command(copy, *talk)
    # The kata's talk in a learner's folder that has solved nothing: the reference samples.
    kata = subprocess.run([sys.executable, "-m", "grader", *talk],
                          cwd=learner_kata(tmp_path / "fresh"), capture_output=True,
                          text=True, encoding="utf-8", check=False)
    assert copied.returncode == kata.returncode == 0, copied.stderr + kata.stderr
    assert copied.stdout == kata.stdout


def test_trace_in_the_copy_is_the_kata_s(released: Path, tmp_path: Path) -> None:
    """A learner's mistake traced in the copy, against the reference's stored runs, reads
    as the kata's live trace of it, byte for byte; the options that would need the
    reference to run again are refused in one line."""
    mistaken = tmp_path / "drop_oldest.py"
    mistaken.write_text(mistake_text(examples("kv-cache"), "drop_oldest"), encoding="utf-8")
    traced = copy_command(released, "trace", "kv-cache", "--submission", str(mistaken))
    kata = subprocess.run([sys.executable, "-m", "grader", "trace", "kv-cache",
                           "--submission", str(mistaken)],
                          cwd=learner_kata(tmp_path / "fresh"), capture_output=True,
                          text=True, encoding="utf-8", check=False)
    assert traced.returncode == kata.returncode == 1, traced.stderr + kata.stderr
    assert "the first fixed case where the runs differ" in traced.stdout
    assert traced.stdout == kata.stdout
    starter = copy_command(released, "trace", "generate")
    assert starter.returncode == 1 and "NotImplementedError" in starter.stdout
    for refused in (("--reference",), ("The cat",), ("--steps", "5")):
        said = copy_command(released, "trace", "generate", *refused)
        assert said.returncode == 2 and said.stderr.count("\n") == 1, said.stderr


def test_train_yours_in_the_copy_then_talk_with_it(released: Path, tmp_path: Path) -> None:
    """In the copy, `train --yours` trains the learner's GPT with their train_loop and
    writes a run that `talk --model RUN --yours` reads through their GPT; `train` alone,
    the grader's GPT, is refused in one line."""
    copy = tmp_path / "learner"
    shutil.copytree(released, copy)
    by_slug = {p.slug: p for p in problems()}
    refused = copy_command(copy, "train", "--steps", "5")
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.stderr
    assert "train --yours" in refused.stderr
    waiting = copy_command(copy, "train", "--yours", "--steps", "5", "--out", "runs/r")
    assert waiting.returncode == 2 and "gpt-kata grade gpt" in waiting.stderr, waiting.stderr
    for slug in ("sampler", "gpt", "train-loop"):
        shutil.copyfile(by_slug[slug].reference,
                        copy / "problems" / by_slug[slug].folder / "solution.py")
    trained = copy_command(copy, "train", "--yours", "--steps", "30", "--out", "runs/r")
    assert trained.returncode == 0, trained.stderr
    run = copy / "runs" / "r"
    assert {p.name for p in run.iterdir()} == {"config.json", "vocab.json",
                                               "model.safetensors", "loss_log.tsv"}
    log = (run / "loss_log.tsv").read_text("utf-8").splitlines()
    assert log[0].startswith("step\ttrain_loss") and log[-1].startswith("30\t"), log
    # The reference's loop returns its log: every entry had the run's whole time.
    elapsed = [float(line.split("\t")[3]) for line in log[1:]]
    assert elapsed[0] < elapsed[-1], log
    talked = copy_command(copy, "talk", "The cat", "--model", "runs/r", "--yours",
                          "--seed", "1", "--chars", "40")
    assert talked.returncode == 0, talked.stderr
    assert talked.stdout.startswith("The cat") and len(talked.stdout.rstrip("\n")) == 47
    assert "the model trained in" in talked.stderr
    assert "Warning" not in trained.stderr + talked.stderr


EXAMPLES = Path(__file__).with_name("copy_examples.py")


def test_the_statements_examples_run_in_the_copy(released: Path, tmp_path: Path) -> None:
    """`from grader.play import *` works in the copy, and every statement's session gives
    the values the statement shows, with the references as the learner's files: on the
    shipped GPT's exported program and its parts, a small GPT to train built from its
    program, and the modern model's stored logits, as the kata gives them from its own
    models."""
    copy = tmp_path / "learner"
    shutil.copytree(released, copy)
    for problem in problems():
        shutil.copyfile(problem.reference, copy / "problems" / problem.folder / "solution.py")
    ran = copy_command(copy, "-c-script", str(EXAMPLES))
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert "Warning" not in ran.stderr, ran.stderr[-3000:]
    results = json.loads(ran.stdout)
    assert sorted(results) == sorted(p.slug for p in problems())
    for slug, result in results.items():
        assert result["attempted"] > 0 and result["failed"] == 0, (slug, result["report"])


def test_a_later_problem_reuses_an_earlier_one_in_the_copy(released: Path,
                                                           tmp_path: Path) -> None:
    """`from grader.reuse import solution_of`, as problem 11's statement shows it, works
    in the copy: the copy holds the kata's own grader.reuse."""
    copy = tmp_path / "learner"
    shutil.copytree(released, copy)
    by_slug = {p.slug: p for p in problems()}
    for slug in ("top-k", "top-k-top-p"):
        shutil.copyfile(by_slug[slug].reference,
                        copy / "problems" / by_slug[slug].folder / "solution.py")
    later = copy / "problems" / by_slug["top-k-top-p"].folder / "solution.py"
    later.write_text(later.read_text(encoding="utf-8") + (
        "\n\nfrom grader.reuse import solution_of\n\n"
        "TopK = solution_of(\"top-k\")  # problems/09-top-k/solution.py's Solution\n"
        "assert TopK().top_k_filter(torch.tensor([1.0, 2.0]), 1)[0] == float(\"-inf\")\n"),
        encoding="utf-8")
    graded = practice_grade(copy, "top-k-top-p")
    assert graded.returncode == 0, graded.stdout + graded.stderr
    assert f"✓ {by_slug['top-k-top-p'].folder} " in graded.stdout, graded.stdout
    assert (copy / "grader" / "reuse.py").read_bytes() == (paths.PACKAGE / "reuse.py").read_bytes()


NOTEBOOK = """\
import linecache, types
cell = '''
import torch

class Solution:
    def decode(self, ids, int_to_char):
        return "".join(int_to_char[int(i)] for i in torch.as_tensor(ids).reshape(-1).tolist())

class FirstOnly:
    def decode(self, ids, int_to_char):
        return int_to_char[int(torch.as_tensor(ids).reshape(-1)[0])]
'''
linecache.cache["<cell>"] = (len(cell), None, cell.splitlines(True), "<cell>")
main = types.ModuleType("cell_main")
sys.modules["cell_main"] = main
exec(compile(cell, "<cell>", "exec"), main.__dict__)
from grader import check
print("RESULT", check("decode", main.Solution), check("decode", main.FirstOnly))
"""


def test_check_grades_a_notebook_class_in_the_copy(released: Path, tmp_path: Path) -> None:
    """`from grader import check` in a learners' copy: the copy's stored answers judge
    the class, as its `gpt-kata grade` judges a file, and the report says so."""
    script = tmp_path / "notebook.py"
    script.write_text(NOTEBOOK, encoding="utf-8")
    ran = copy_command(released, "-c-script", str(script))
    assert ran.returncode == 0 and "RESULT True False" in ran.stdout, ran.stdout + ran.stderr
    assert "Traceback" not in ran.stderr, ran.stderr[-3000:]
    assert "practice grade" in ran.stdout and "05-decode" in ran.stdout, ran.stdout


THREADS_FIRST = """\
import linecache, types, torch
torch.set_num_threads(2)
print("PRODUCT", float((torch.ones(256, 256) @ torch.ones(256, 256))[0, 0]))
cell = {cell!r}
linecache.cache["<cell>"] = (len(cell), None, cell.splitlines(True), "<cell>")
main = types.ModuleType("cell_main")
sys.modules["cell_main"] = main
exec(compile(cell, "<cell>", "exec"), main.__dict__)
from grader import check
print("RESULT", check("attention-head", main.Head))
"""


def test_check_grades_in_the_copy_after_the_notebook_ran_torch_on_threads(
        released: Path, tmp_path: Path) -> None:
    """A notebook that ran torch on two threads first (examples(), a forward pass) holds
    an OpenMP thread pool, which the practice grade's forked process cannot use: the
    head's first matrix product there waited until the call's time limit, and a right
    class failed as an endless loop."""
    head = (paths.ROOT / "solutions" / "20-attention-head" / "solution.py").read_text()
    script = tmp_path / "notebook.py"
    script.write_text(THREADS_FIRST.format(cell=head), encoding="utf-8")
    ran = copy_command(released, "-c-script", str(script))
    assert "PRODUCT 256.0" in ran.stdout, ran.stdout + ran.stderr
    assert ran.returncode == 0 and "RESULT True" in ran.stdout, ran.stdout + ran.stderr
    assert "no answer within" not in ran.stdout, ran.stdout


def test_the_references_copied_in_pass(released: Path, tmp_path: Path) -> None:
    copy = tmp_path / "learner"
    shutil.copytree(released, copy)
    for problem in problems():
        shutil.copyfile(problem.reference, copy / "problems" / problem.folder / "solution.py")
    graded = practice_grade(copy)
    assert graded.returncode == 0, graded.stdout + graded.stderr
    assert "Warning" not in graded.stderr, graded.stderr
    by_slug = {p.slug: p for p in problems()}
    assert sorted(practised(copy)) == sorted(by_slug)  # every problem, kv-cache too
    for slug in practised(copy):
        assert any(line.startswith(f"✓ {by_slug[slug].folder} ")
                   for line in graded.stdout.splitlines()), graded.stdout


def test_a_damaged_model_file_is_named_not_blamed_on_the_learner(released: Path,
                                                                 tmp_path: Path) -> None:
    """The grade says it on the problem's line; talk and trace, which run the same
    model, in one line."""
    copy = tmp_path / "learner"
    shutil.copytree(released, copy)
    by_slug = {p.slug: p for p in problems()}
    for slug in ("generate", "sampler"):
        shutil.copyfile(by_slug[slug].reference,
                        copy / "problems" / by_slug[slug].folder / "solution.py")
    assert practice_grade(copy, "sampler").returncode == 0  # talk runs a passing sampler
    shipped = copy / PACKAGE / "models" / "shipped.safetensors"
    shipped.write_bytes(shipped.read_bytes()[:100_000])  # a download cut short
    graded = practice_grade(copy, "generate")
    assert graded.returncode == 1, graded.stdout + graded.stderr
    line = next(line for line in graded.stdout.splitlines() if line.startswith("✗"))
    assert "shipped.safetensors is damaged" in line, graded.stdout + graded.stderr
    assert "Traceback" not in graded.stderr, graded.stderr
    for command in (("talk", "Once", "--chars", "5"), ("trace", "generate")):
        ran = copy_command(copy, *command)
        assert ran.returncode == 2, ran.stdout + ran.stderr
        said = ran.stderr.strip().splitlines()
        assert len(said) == 1 and "shipped.safetensors is damaged" in said[0], ran.stderr


# An endless loop, a file that exits as it loads, and one that changes torch's default
# dtype for every later problem in its process; then a problem whose module would be
# built in that dtype.
ENDLESS, EXITS, CHANGES_TORCH, AFTER_IT = "crop-context", "last-logits", "softmax", \
    "attention-head"


@pytest.mark.parametrize("spawned", [False, True], ids=["forked", "spawned"])
def test_a_problems_code_cannot_hang_end_or_change_the_copys_grade(
        released: Path, tmp_path: Path, spawned: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """The learner's code runs in a process of its own (forked on Linux, spawned on macOS
    and Windows, taken here with the kata's switch), within the call's limit, replaced
    after a time-out or an exit, with torch's state put back before each problem; a
    time-out says what the code did meanwhile."""
    if spawned:
        monkeypatch.setenv("GPT_KATA_SPAWN_WORKERS", "1")
    copy = tmp_path / "learner"
    shutil.copytree(released, copy)
    by_slug = {p.slug: p for p in problems()}

    def write(slug: str, text: str) -> None:
        (copy / "problems" / by_slug[slug].folder / "solution.py").write_text(text, "utf-8")

    crop = by_slug[ENDLESS].reference.read_text("utf-8")
    write(ENDLESS, re.sub(r"(def crop_context\([^)]*\)[^:]*:\n)",
                          r"\1        while True:\n            pass\n", crop, count=1))
    write(EXITS, "import sys\nsys.exit(0)\n")
    write(CHANGES_TORCH, "import torch\ntorch.set_default_dtype(torch.float64)\n"
          + by_slug[CHANGES_TORCH].reference.read_text("utf-8"))
    write(AFTER_IT, by_slug[AFTER_IT].reference.read_text("utf-8"))
    graded = copy_command(copy, "grade", ENDLESS, EXITS, CHANGES_TORCH, AFTER_IT,
                          "--timeout", "2")
    assert graded.returncode == 1, graded.stdout + graded.stderr
    lines = {line.split()[1]: line for line in graded.stdout.splitlines()
             if line[:1] in ("✓", "✗")}
    # The check the loop was in fails, the rest are not run, as in the kata.
    assert lines[by_slug[ENDLESS].folder].endswith("checks fail"), graded.stdout
    endless = graded.stdout.split(lines[by_slug[ENDLESS].folder], 1)[1].split("\n✗", 1)[0]
    assert "crop_context(): no answer within 2 seconds" in endless, endless
    assert "not run: crop_context(): no answer within 2 seconds" in endless, endless
    # What the loop did meanwhile, measured as the kata measures a worker: it computed.
    found = re.search(r"(\d+\.\d) s of CPU in", endless)
    assert found and float(found[1]) > 0.2, endless
    assert "SystemExit: 0" in lines[by_slug[EXITS].folder]
    assert lines[by_slug[CHANGES_TORCH].folder].startswith("✓")
    assert lines[by_slug[AFTER_IT].folder].startswith("✓"), graded.stdout
    assert "2/4 problems pass" in graded.stdout


@pytest.mark.parametrize(("slug", "line", "reading"), [
    ("generate", "            logits = model(context)[:, -1, :]\n",
     "            assert model.config.context_length == context_length\n"),
    ("train-step", "        optimizer.zero_grad(set_to_none=True)\n",
     "        assert model.config.n_embd > 0\n"),
])
def test_the_copys_models_carry_their_config_as_the_katas_do(
        slug: str, line: str, reading: str, practice, tmp_path: Path) -> None:  # noqa: ANN001
    """Code that reads model.config (the kata's GPT has one) runs in the copy too: on the
    shipped and random models, and on a GPT a training case builds."""
    source = next(p for p in problems() if p.slug == slug).reference.read_text("utf-8")
    assert line in source
    path = tmp_path / "solution.py"
    path.write_text(source.replace(line, reading + line), "utf-8")
    result = practice.grade_problem(slug, path)
    assert result.ok, (result.unavailable, result.failures)


def test_reset_in_the_copy_puts_the_starter_back(released: Path, tmp_path: Path) -> None:
    copy = tmp_path / "learner"
    shutil.copytree(released, copy)
    folder = copy / "problems" / "03-softmax"
    starter = (folder / "solution.py").read_bytes()
    (folder / "solution.py").write_text("# mine\n", encoding="utf-8")
    done = copy_command(copy, "reset", "softmax", "--yes")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (folder / "solution.py").read_bytes() == starter
    (kept,) = folder.glob("solution.py.*.bak")
    assert kept.read_text(encoding="utf-8") == "# mine\n"


@pytest.mark.parametrize("mistake", ["no_bias_correction", "eps_inside_the_root"])
def test_a_mistakes_evidence_is_no_longer_than_the_full_graders(
        released: Path, tmp_path: Path, mistake: str) -> None:
    """The same AdamW mistake graded by the copy and by the kata: the copy's report names
    it as the kata's does, in no more lines (it once dumped every case's tensors)."""
    text = mistake_text(examples("adamw"), mistake)
    folder = next(p.folder for p in problems() if p.slug == "adamw")
    copy = tmp_path / "learner"
    shutil.copytree(released, copy)
    (copy / "problems" / folder / "solution.py").write_text(text, encoding="utf-8")
    kata = learner_kata(tmp_path / "fresh")
    (kata / "problems" / folder / "solution.py").write_text(text, encoding="utf-8")
    copied = practice_grade(copy, "adamw")
    graded = subprocess.run([sys.executable, "-m", "grader", "grade", "adamw"], cwd=kata,
                            capture_output=True, text=True, encoding="utf-8", check=False)
    assert copied.returncode == graded.returncode == 1, copied.stderr + graded.stderr
    named = mistake_words(examples("adamw"), mistake)
    assert named in copied.stdout and named in graded.stdout
    # The failures as the kata shows them, their inputs too; the copy adds its last
    # line, that this is a practice grade.
    evidence = [line for line in copied.stdout.splitlines()
                if not line.startswith("This is a practice grade")]
    assert len(evidence) <= len(graded.stdout.splitlines()), copied.stdout




@pytest.fixture(scope="module")
def practice(released: Path):  # noqa: ANN201 - the copy's own module
    sys.path.insert(0, str(released))
    try:
        from gpt_kata_practice import practice_grade

        yield practice_grade
    finally:
        sys.path.remove(str(released))


@pytest.mark.parametrize("folder", example_folders(),
                         ids=problem_of)
def test_styles_pass_and_mistakes_are_named(folder: Path, practice, tmp_path: Path) -> None:  # noqa: ANN001
    """Every equivalent style passes the practice checks, and of the mistakes that fail
    them, at least one is named as the instructor's grade names it."""
    spec, slug = specs()[folder], problem_of(folder)
    stored = practice.stored()
    if slug not in stored["problems"]:
        why = stored["not_practised"].get(slug, "?")
        pytest.skip(f"{slug} has no practice cases: {why}")
    for name in spec.get("equivalent", {}):
        path = example(slug, name, tmp_path)
        result = practice.grade_problem(slug, path)
        assert result.ok, (name, result.unavailable, result.failures)
    named, failed = [], []
    for name, mistake in spec.get("mistakes", {}).items():
        path = tmp_path / f"{name}.py"
        path.write_text(mistake_text(folder, name), encoding="utf-8")
        result = practice.grade_problem(slug, path)
        if result.ok:
            continue  # a mistake the stored cases cannot show (a generator's state)
        failed.append(name)
        report = "\n".join(f.says for f in result.failures) + result.unavailable
        # A known mistake may be given by its id alone (tests/patches.py): then its id.
        says = mistake.get("says", [])
        ids = {f.mistake["id"] for f in result.failures if f.mistake}
        if (all(s in report for s in ([says] if isinstance(says, str) else says)) if says
                else mistake["mistake"] in ids):
            named.append(name)
    if slug == "sample":
        # Its mistakes' stored answers are draws the learner's run does not repeat: only
        # the draws that ignore the generator are named, by calling sample() again as the
        # kata does (grader/grading/judging/generator_draws.py).
        assert sorted(named) == ["argmax", "global_generator"], (failed, named)
    else:
        assert named, f"none of {failed} is named"
    if slug == "kv-cache":
        # Its text is right: only the calls the copy's model saw can name it.
        assert "no_cache" in named, named


@pytest.mark.parametrize(("slug", "folder", "line", "float64"), [
    ("last-logits", "02-last-logits", "return logits[:, -1, :]",
     "return logits[:, -1, :].double()"),
    ("softmax", "03-softmax", "return exps / exps.sum(dim=-1, keepdim=True)",
     "return (exps / exps.sum(dim=-1, keepdim=True)).double()"),
])
def test_a_float64_answer_is_judged_as_the_instructors_judge_does(  # noqa: PLR0913
        slug: str, folder: str, line: str, float64: str, practice, tmp_path: Path) -> None:  # noqa: ANN001
    """Right values in float64 where the reference gives float32: last_logits' judge takes
    them, softmax's insists on the logits' dtype; the copy says the same of each."""
    source = (paths.ROOT / "solutions" / folder / "solution.py").read_text("utf-8")
    assert line in source
    path = tmp_path / "solution.py"
    path.write_text(source.replace(line, float64), "utf-8")
    graded = instructor("grade", slug, "--submission", str(path), "-q")
    assert graded.returncode == (0 if slug == "last-logits" else 1), graded.stdout
    result = practice.grade_problem(slug, path)
    assert result.ok == (graded.returncode == 0), (result.unavailable, result.failures)


# -- the instructor's grader on a learners' copy ---------------------------------------------
# Two cheap problems: one solved, one with a named mistake; the rest as the copy gives them.
SOLVED, MISTAKEN = "crop-context", "temperature"


def learner_files(tmp_path: Path) -> dict[str, str]:
    by_slug = {p.slug: p for p in problems()}
    return {by_slug[SOLVED].folder: by_slug[SOLVED].reference.read_text("utf-8"),
            by_slug[MISTAKEN].folder: mistake_text(examples(MISTAKEN), "multiply")}


def instructor(*args: str) -> subprocess.CompletedProcess[str]:
    """The full grader, run from the kata as an instructor runs it, drawing from a seed."""
    return subprocess.run([sys.executable, "-m", "grader", *args, "--allow-unisolated"],
                          cwd=paths.ROOT, capture_output=True, text=True, encoding="utf-8",
                          env={**os.environ, SEED_VARIABLE: INSTRUCTOR_SEED}, check=False)


def verdicts(report: dict) -> list[tuple]:
    """What a grade says of each check, without where the files were."""
    return [(t["name"], t["status"], t["message"], (t["mistake"] or {}).get("id"))
            for t in report["tests"]]


@pytest.fixture(scope="module")
def two_learners(released: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A roster: `copy`, a repository made from the learners' copy, and `clone`, a clone
    of the kata's layout (its starters), holding the same two solutions."""
    roster = tmp_path_factory.mktemp("roster")
    shutil.copytree(released, roster / "copy")
    shutil.copytree(paths.STARTERS, roster / "clone" / "problems")
    for folder, source in learner_files(roster).items():
        for learner in ("copy", "clone"):
            (roster / learner / "problems" / folder / "solution.py").write_text(source, "utf-8")
    return roster


def test_the_instructor_grades_a_copy_as_the_full_kata(two_learners: Path,
                                                      tmp_path: Path) -> None:
    reports = {}
    for learner in ("copy", "clone"):
        out = tmp_path / f"{learner}.json"
        graded = instructor("grade", SOLVED, MISTAKEN, "--submission",
                            str(two_learners / learner / "problems"), "--json", str(out))
        assert graded.returncode == 1, graded.stderr[-3000:]  # one problem fails
        reports[learner] = json.loads(out.read_text("utf-8"))
    assert verdicts(reports["copy"]) == verdicts(reports["clone"])
    statuses = {p["problem"]: p["status"] for p in reports["copy"]["problems"]}
    assert statuses == {SOLVED: "pass", MISTAKEN: "fail"}
    spec = tomllib.loads((examples(MISTAKEN) / "expected.toml").read_text("utf-8"))
    wanted = spec["mistakes"]["multiply"]["mistake"]
    named = [(t["mistake"] or {}).get("id") for t in reports["copy"]["tests"]]
    assert wanted in named, named
    # The practice grade of the same files names the mistake by the full grader's id.
    practice_json = tmp_path / "practice.json"
    practised_here = practice_grade(two_learners / "copy", SOLVED, MISTAKEN, "--json",
                                    str(practice_json))
    assert practised_here.returncode == 1, practised_here.stdout + practised_here.stderr
    practice_report = json.loads(practice_json.read_text("utf-8"))
    assert practice_report["mode"] == "practice"
    assert {p["problem"]: p["status"] for p in practice_report["problems"]} == statuses
    full_ids = {t["mistake"]["id"] for t in reports["copy"]["tests"] if t["mistake"]}
    practice_ids = {t["mistake"]["id"] for t in practice_report["tests"] if t["mistake"]}
    assert practice_ids and practice_ids <= full_ids, (practice_ids, full_ids)


def test_the_gradebook_and_gradescope_take_a_copy_as_a_clone(two_learners: Path,
                                                           tmp_path: Path) -> None:
    from grader.classroom.gradescope_autograder import submission_root

    out = tmp_path / "out"
    graded = instructor("gradebook", str(two_learners), SOLVED, MISTAKEN, "--out", str(out),
                        "--jobs", "1", "-q")
    assert graded.returncode == 0, graded.stderr[-3000:]
    import csv

    with (out / "gradebook.csv").open(newline="") as handle:
        rows = {r["learner"]: {k: v for k, v in r.items() if k != "learner"}
                for r in csv.DictReader(handle)}
    assert rows["copy"] == rows["clone"]
    assert (rows["copy"][SOLVED], rows["copy"][MISTAKEN]) == ("pass", "fail")
    # Gradescope's autograder finds the kata in an upload as the gradebook does.
    assert submission_root(two_learners / "copy") == two_learners / "copy"


# -- the practice copies of the full grader's rules ------------------------------------------
def written_weights() -> ModuleType:
    """The copy's weights.py as the release writes it, loaded as a module of its own."""
    from grader.release import sources

    module = ModuleType("written_weights")
    exec(compile(sources.weights_module(), "weights.py", "exec"), module.__dict__)  # noqa: S102
    return module


def every_fit() -> dict[str, tuple]:
    """Each misfit of tests/misfits.py, and a module that fits: (module, its weights)."""
    import torch
    from torch import nn

    fits = (nn.Linear(2, 3), {"weight": torch.ones(3, 2), "bias": torch.ones(3)})
    return {"fits": fits, **misfits()}


def test_the_copys_weights_code_says_what_the_full_graders_says() -> None:
    """The copy's weights.py is written from grader/model/parts.py: loading known weights
    into each misfit raises the same kind of error with the same message in both, and a
    module that fits gets the same weights."""
    from grader.model import parts

    written = written_weights()
    for name, (module, weights) in every_fit().items():
        results = []
        for code in (parts, written):
            target = deepcopy(module)
            try:
                code.load_known_weights(target, weights, "Part")
            except code.KnownWeightsError as error:
                results.append((type(error).__name__, str(error)))
            else:
                results.append(("loaded", [t.tolist() for t in target.state_dict().values()]))
        assert results[0] == results[1], name
        assert results[0][0] == ("loaded" if name == "fits" else
                                 "KnownWeightsError" if name == "a-wrong-shape"
                                 else "ParameterNamesError"), (name, results[0])
    said = {name: str(pytest.raises(written.KnownWeightsError, written.load_known_weights,
                                    deepcopy(m), w, "Part").value)
            for name, (m, w) in misfits().items()}
    assert "tied weights" in said["tied"]
    assert "nn.ModuleList" in said["a-python-list"]
    assert "the same Linear as blocks.0" in said["one-block-thrice"]
    assert "and 18 more" in said["many-names"]
    assert "without bias=False" in said["biases-left-off"]


def test_the_copys_weights_code_speaks_the_learners_language(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The copy's weights.py says a misfit in Chinese under --lang zh, as the full
    grader's does: its code is parts.py's, with the language's catalogs behind it."""
    from grader.locale import catalog

    monkeypatch.setenv("GPT_KATA_LANG", "zh")
    module, weights = misfits()["misnamed"]
    written = written_weights()
    with pytest.raises(written.KnownWeightsError) as raised:
        written.load_known_weights(deepcopy(module), weights, "Part")
    first = str(raised.value).splitlines()[0]
    assert first == catalog("zh")["{name}'s parameters do not have the names the statement "
                                  "fixes, so the grader cannot load its known weights into "
                                  "them:"].format(name="Part")


def test_the_practice_tolerances_are_the_full_graders() -> None:
    """The practice judge takes the full grader's tolerances of equality
    (grader/grading/values/tolerances.py, shipped in the copy), not copies of them;
    its equality must judge as the grader's does."""
    import torch

    from grader.grading.values import equality, tolerances
    from grader.release.practice import judge

    assert judge.activation_atol is tolerances.activation_atol
    assert (judge.RTOL, judge.ATOL, judge.TRAINED_WEIGHTS_ATOL) == (
        tolerances.RTOL, tolerances.ATOL, tolerances.TRAINED_WEIGHTS_ATOL)
    # Both equalities take and refuse the same near misses.
    want = torch.tensor([1.0, -2.0, 0.0, 1e-7])
    for moved in (1e-7, 9e-7, 2e-6, 1e-5, 3e-5):
        got = want + moved
        assert judge.same(got, want) == equality.same_outcome(("value", got), ("value", want))
        assert judge.same(got, want, activations=True) == equality.same_activations(
            ("value", got), ("value", want))


def test_the_practice_grade_names_a_gradient_read_where_there_is_none_as_the_kata_does() -> None:
    """clip-grad-norm's check takes any error raised on a None .grad for its mistake,
    whichever operation met the None (`p.grad.double()`, `torch.linalg.vector_norm(None)`);
    the copy's rule for its stored answers must too, or the copy names nothing where
    the kata names the mistake."""
    from grader.release.practice import judge

    learners = ("error", "AttributeError: 'NoneType' object has no attribute 'double'")
    stored = ("error", "TypeError: linalg_vector_norm(): argument 'input' (position 1) "
                       "must be Tensor, not NoneType")
    assert judge.same_outcome(learners, stored, "own-scale")
    assert not judge.same_outcome(("error", "ZeroDivisionError: division by zero"), stored,
                                  "own-scale")
    assert not judge.same_outcome(learners, stored, "")  # other problems' errors: as raised


def test_the_practice_grade_says_a_wrong_kind_and_where_a_tensor_differs_as_the_kata_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A list of characters where text is expected is said to be a list (its repr beside
    the text read as right), and a tensor of the expected shape and dtype by where it
    differs, to six digits, not by its shape twice and a float32's every digit."""
    import torch

    stand_in_for_the_copys_package(tmp_path, monkeypatch)
    from grader.release.practice.practice_grade import wrong_answer

    part = {"method": "greedy", "judge": ""}
    said = wrong_answer("case a", part, ("value", [" ", "t"]), "", " t").says
    assert said == "greedy()'s result should be a str, but it is a list"
    want = torch.zeros(1, 40)
    got = want.clone()
    got[0, 18] = 5.164462089538574
    said = wrong_answer("case a", {**part, "method": "top_k_filter"}, ("value", got), "",
                        want).says
    assert said == ("top_k_filter() returned float32 tensor of shape (1, 40), as expected, "
                    "but entry (0, 18) is 5.16446, expected 0 (1 of 40 entries differ)")


def test_the_practice_grade_says_which_part_of_an_answer_of_several_tensors_differs() -> None:
    """AdamW's lists, clip-grad-norm's (total, gradients) and the attention's
    (y, (k, v)) are told by their parts, and the first part that differs by its place
    and entry, as the kata says where; not by torch's repr of the numbers, cut off
    before it reaches them."""
    import torch

    from grader.release.practice import judge

    grads = [torch.zeros(4, 3), torch.ones(3)]
    other = [torch.zeros(4, 3), torch.tensor([1.0, 7.0, 1.0])]
    told = judge.describe((torch.tensor(2.5), grads))
    assert "tensor([" not in told and "float32 tensor of shape (4, 3)" in told
    said = judge.difference((torch.tensor(2.5), other), (torch.tensor(2.5), grads))
    assert "[1][1]" in said and "(1,) is 7, expected 1" in said
    assert "[0] is a float" in judge.difference((2.5, grads), (torch.tensor(2.5), grads))
    assert "[1][0] has shape (3, 4)" in judge.difference(
        (torch.tensor(2.5), [torch.zeros(3, 4), torch.ones(3)]), (torch.tensor(2.5), grads))


def stand_in_for_the_copys_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The copy's package, stood in for by the modules it is written from, so that a
    test can import the practice grade without building a copy."""
    package = tmp_path / "gpt_kata_practice"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for name in ("codec", "judge", "program"):
        shutil.copy(Path("grader/release/practice") / f"{name}.py", package / f"{name}.py")
    from grader.release import sources

    (package / "weights.py").write_bytes(sources.weights_module())  # as the release writes it
    monkeypatch.syspath_prepend(str(tmp_path))
    imported_afresh(monkeypatch, "gpt_kata_practice", "gpt_kata_practice.codec",
                    "gpt_kata_practice.judge", "gpt_kata_practice.program",
                    "gpt_kata_practice.weights", "grader.release.practice.practice_grade")


def test_the_practice_grade_gives_one_bug_one_name_where_two_mistakes_agree(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A case whose answer two stored mistakes give alike (lr-schedule's integer division
    and its whole-period cosine both leave the last step at max_lr) names the one
    another case of the same file named, as the kata's Diagnoses do; without one, the
    first in the check's order. The copy's package is stood in for by the modules it is
    written from."""
    stand_in_for_the_copys_package(tmp_path, monkeypatch)
    from gpt_kata_practice import codec

    from grader.release.practice.practice_grade import Failure, Result, fail, naming, settle_names

    both = [{"id": f"lr-schedule/{name}", "name": name, "hint": "",
             "outcome": codec.encode(("value", 0.003))}
            for name in ("run-a-whole-period-of-the-cosine",
                         "divide-the-progress-with-integer-division")]
    named = ["lr-schedule/divide-the-progress-with-integer-division"]
    said = naming(Failure("case train-last-step", "wrong"), ("value", 0.003), both, "", (),
                  named)
    assert said.mistake and said.mistake["id"] == named[0]
    # Named by no earlier case: decided once every case is graded. A later case that
    # only one of them explains names it on the earlier one too (the kata's Diagnoses
    # do; the first in the order was named where problem 06's later cases showed the other).
    result = Result("lr-schedule")
    fail(result, naming(Failure("case a", "wrong"), ("value", 0.003), both, "", (),
                        result.named))
    assert result.failures[0].mistake is None and result.named == []
    fail(result, naming(Failure("case b", "wrong"), ("value", 0.004),
                        [*both[:1], {**both[1], "outcome": codec.encode(("value", 0.004))}],
                        "", (), result.named))
    settle_names(result)
    assert [f.mistake and f.mistake["id"] for f in result.failures] == [both[1]["id"]] * 2
    assert [c["mistake"]["id"] for c in result.checks] == [both[1]["id"]] * 2
    assert "This is what happens when you" in result.checks[0]["message"]
    # Without such a case, the first in the check's order.
    alone = Result("lr-schedule")
    fail(alone, naming(Failure("case a", "wrong"), ("value", 0.003), both, "", (),
                       alone.named))
    settle_names(alone)
    assert alone.failures[0].mistake["id"] == both[0]["id"] and alone.named == [both[0]["id"]]
    # A mistake stored for a case the learner answered right gives another answer there:
    # it is not theirs (the kata's Diagnoses.seen). The other that gives this answer is
    # named in its place, and where none is left, nothing is.
    refuted = Result("lr-schedule", refuting={both[0]["id"]})
    fail(refuted, naming(Failure("case a", "wrong"), ("value", 0.003), both[:1], "", (),
                         refuted.named))
    fail(refuted, naming(Failure("case b", "wrong"), ("value", 0.003), both, "", (),
                         refuted.named))
    assert [f.mistake and f.mistake["id"] for f in refuted.failures] == [both[0]["id"]] * 2
    settle_names(refuted)
    assert [f.mistake and f.mistake["id"] for f in refuted.failures] == [None, both[1]["id"]]
    assert refuted.checks[0]["message"] == "wrong" and refuted.checks[0]["mistake"] is None
    assert "This is what happens when you" in refuted.checks[1]["message"]
    assert refuted.named == [both[1]["id"]]


def test_the_practice_grade_calls_no_code_again_for_an_answer_stored_mistakes_explain(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An answer that two stored mistakes give alike is explained, to be named once every
    case is graded: calling the code again to diagnose it (sample's probe draws, a
    module's second call) cost calls and, where it said anything, dropped both names."""
    stand_in_for_the_copys_package(tmp_path, monkeypatch)
    import torch
    from gpt_kata_practice import codec

    from grader.release.practice import practice_grade

    def never(*args: object) -> None:
        raise AssertionError("the learner's code was called again")

    monkeypatch.setattr(practice_grade, "drawn_again", never)
    monkeypatch.setattr(practice_grade, "unrepeated", never)
    tied = [{"id": f"sample/{name}", "name": name, "hint": "",
             "outcome": codec.encode(("value", 3))} for name in ("one-way", "another-way")]
    # A module problem with sample's diagnosis: both ways of calling it again are open.
    part = {"method": "forward", "arg_names": ["config", "weights", "x"], "module": "Solution",
            "judge": "", "diagnosis": "generator-draws", "iterate": False}
    case = {"args": codec.encode(({}, {}, 1)), "expected": codec.encode(2), "mistakes": tied}

    class Solution(torch.nn.Module):
        def __init__(self, config: object) -> None:
            super().__init__()

        def forward(self, x: int) -> int:
            return 3

    monkeypatch.setattr(practice_grade, "load_known_weights", lambda *args: None)
    learner = types.SimpleNamespace(Solution=Solution)
    failure = practice_grade.case_failure("case a", part, case, learner, tmp_path / "s.py",
                                          lambda _: None, "sample", [])
    assert failure is not None and [m["id"] for m in failure.ties] == [m["id"] for m in tied]


# Learner code that interrupts its own grade, at every call, and notes its process.
INTERRUPTS_ITS_GRADE = """\
import os, signal, sys
import torch


class Solution:
    def last_logits(self, model, context):
        with open(os.environ["PID_FILE"], "a") as noted:
            noted.write(f"{os.getpid()}\\n")
        os.kill(os.getppid(), signal.SIGINT)
        return model(context)[:, -1, :]
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forcing a path is Linux's")
@pytest.mark.parametrize("spawned", [False, True], ids=["forked", "spawned"])
def test_code_that_interrupts_the_copys_grade_leaves_no_process_behind(
        released: Path, tmp_path: Path, spawned: bool) -> None:
    """The grade stops as on a Ctrl-C. Its problems' process outlived it, on a pipe it
    held both ends of: the next SIGINT broke off the grade's wait to end it. Spawned, it
    printed a traceback of its own as it met the closed pipe."""
    import psutil

    copy = tmp_path / "learner"
    shutil.copytree(released, copy)
    last_logits = next(p for p in problems() if p.slug == "last-logits")
    (copy / "problems" / last_logits.folder / "solution.py").write_text(INTERRUPTS_ITS_GRADE)
    pids = tmp_path / "pids"
    code = COPY_ONLY + "from grader.cli.entry import run; run()"
    env = {**os.environ, "PID_FILE": str(pids)}
    if spawned:
        env["GPT_KATA_SPAWN_WORKERS"] = "1"
    # Its output in files: a process that outlived the grade holds a pipe open, which
    # left subprocess.run (and a learner's `gpt-kata grade | less`) waiting for good.
    out, err = tmp_path / "out", tmp_path / "err"
    with out.open("w") as stdout, err.open("w") as stderr:
        code = subprocess.run([sys.executable, "-I", "-B", "-c", code, "grade", "last-logits"],
                              cwd=copy, stdout=stdout, stderr=stderr, env=env,
                              check=False).returncode
    said = err.read_text(encoding="utf-8")
    assert code == 130, out.read_text(encoding="utf-8") + said
    assert "Traceback" not in said, said
    ran = []
    for pid in {int(pid) for pid in pids.read_text().split()}:
        with contextlib.suppress(psutil.NoSuchProcess):
            ran.append(psutil.Process(pid))
    _, alive = psutil.wait_procs(ran, timeout=30)  # ended as the grade ends, or at once
    alive = [p for p in alive if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    assert pids.read_text() and not alive, [process.pid for process in alive]


@pytest.mark.skipif(not sys.platform.startswith("linux"),
                    reason="a terminal's Ctrl-C, as Linux sends it")
def test_a_ctrl_c_in_the_middle_of_the_copys_grade_ends_it_as_the_katas_does(
        released: Path) -> None:
    """A terminal sends Ctrl-C to the grade and to the process its problems run in: that
    process printed a traceback of its own, and the grade's next send met a broken pipe
    and exited with 1."""
    import signal
    import time

    import psutil

    code = COPY_ONLY + "from grader.cli.entry import run; run()"
    grade = subprocess.Popen([sys.executable, "-I", "-B", "-c", code, "grade"], cwd=released,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             encoding="utf-8", start_new_session=True)
    try:
        grading = psutil.Process(grade.pid)
        for _ in range(1200):  # its problems' process starts with the first problem
            if grading.children() or grade.poll() is not None:
                break
            time.sleep(0.05)
        time.sleep(1.0)
        assert grade.poll() is None, "the grade ended before the key was pressed"
        os.killpg(grade.pid, signal.SIGINT)  # to the whole group, as a terminal does
        out, err = grade.communicate(timeout=240)  # against a hang only
    finally:
        grade.kill()
    assert grade.returncode == 130, out + err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
