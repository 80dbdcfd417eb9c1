"""Parts of the learners' copy on a smaller copy of a few problems, written by the release
itself (`write_release(..., only=...)`): how its practice grade says a failure and its fix,
and the problems practised from outputs the release stores beyond a check's goldens."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import COPY_ONLY, examples, imported_afresh, run_grade
from learner_examples import mistake_text

from grader import paths
from grader.locale import speaking, tr
from grader.registry import problems
from grader.release.build import PACKAGE, write_release

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

BY_SLUG = {p.slug: p for p in problems()}


def spec_of(slug: str) -> dict:
    return tomllib.loads((examples(slug) / "expected.toml").read_text("utf-8"))


def mistaken(slug: str, name: str) -> str:
    """A submission's named mistake, as a file's text."""
    return mistake_text(examples(slug), name)


def practice_grade(copy: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The copy's grader as a learner runs it, with the kata's own grader out of reach."""
    code = (COPY_ONLY +
            "from grader.cli.main import main; sys.exit(main(sys.argv[1:]))")
    return subprocess.run([sys.executable, "-I", "-B", "-c", code, "grade", *args], cwd=copy,
                          capture_output=True, text=True, encoding="utf-8", check=False)


@pytest.fixture(scope="module")
def small_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    copy = tmp_path_factory.mktemp("small") / "copy"
    write_release(copy, only=frozenset({"temperature", "bpe"}))
    return copy


def learner(small_copy: Path, tmp_path: Path, files: dict[str, str]) -> Path:
    """A learner's repository made from the copy, with these files written."""
    copy = tmp_path / "learner"
    shutil.copytree(small_copy, copy)
    for slug, text in files.items():
        (copy / "problems" / BY_SLUG[slug].folder / "solution.py").write_text(text, "utf-8")
    return copy


def test_a_named_mistakes_fix_is_data_shown_only_by_hint(
        small_copy: Path, tmp_path: Path) -> None:
    """The JSON report carries what a failure says and, apart, the mistake with its fix;
    the grade names the mistake, and `hint` then gives its fix, as in the kata."""
    copy = learner(small_copy, tmp_path, {"temperature": mistaken("temperature", "multiply")})
    out = tmp_path / "grade.json"
    graded = practice_grade(copy, "temperature", "--json", str(out))
    assert graded.returncode == 1, graded.stdout + graded.stderr
    failed = [t for t in json.loads(out.read_text("utf-8"))["tests"] if t["status"] == "fail"]
    named = [t for t in failed if t["mistake"]]
    assert named, failed
    for test in named:
        hint = test["mistake"]["hint"]
        assert hint and hint not in test["message"], test
        assert "Hint:" not in test["message"], test
        # The mistake is said last, before the case's inputs, as the kata's message has it.
        said = re.split(r"\n(?:the inputs of |its inputs:)", test["message"])[0]
        assert said.endswith(f"This is what happens when you "
                             f"{test['mistake']['name']}."), test
    assert named[0]["mistake"]["hint"] not in graded.stdout, graded.stdout
    assert "stuck? `gpt-kata hint temperature`" in graded.stdout, graded.stdout
    code = COPY_ONLY + "from grader.cli.main import main; sys.exit(main(sys.argv[1:]))"
    fix = subprocess.run([sys.executable, "-I", "-B", "-c", code, "hint", "temperature"],
                         cwd=copy, capture_output=True, text=True, encoding="utf-8",
                         check=False)
    assert fix.returncode == 0, fix.stderr
    assert f"Fix: {named[0]['mistake']['hint']}" in fix.stdout, fix.stdout


@pytest.mark.parametrize(("name", "says"), [
    ("no_raise", "apply_temperature(logits, 0.0) returned a value instead of raising "
                 "ValueError"),
    ("raise_only_negative", "apply_temperature(logits, 0) returned a value instead of "
                            "raising ValueError"),
])
def test_the_copy_practises_refusals_as_the_kata_judges_them(
        small_copy: Path, tmp_path: Path, name: str, says: str) -> None:
    """A temperature of 0 that returns a value fails the copy's grade as it fails the kata's,
    naming the same mistake; the copy stores the refusals beside the cases."""
    copy = learner(small_copy, tmp_path, {"temperature": mistaken("temperature", name)})
    out = tmp_path / "grade.json"
    graded = practice_grade(copy, "temperature", "--json", str(out))
    assert graded.returncode == 1, graded.stdout + graded.stderr
    failed = [t for t in json.loads(out.read_text("utf-8"))["tests"] if t["status"] == "fail"]
    refusals = [t for t in failed if t["check"].startswith("refusal: ")]
    assert refusals and len(refusals) == len(failed), failed
    assert any(t["message"].startswith(says) for t in refusals), refusals
    assert {t["mistake"]["id"] for t in refusals} == {
        "temperature/forget-to-raise-for-temperature-0"}, refusals


@pytest.mark.parametrize(("raised", "says"), [
    ("TypeError('no')", "should raise ValueError; instead apply_temperature() raised "
                        "solution.py:4: TypeError: no"),
    ("ValueError()", "raised ValueError without a message; say what is wrong"),
])
def test_a_refusal_with_the_wrong_error_fails_in_the_copy(
        small_copy: Path, tmp_path: Path, raised: str, says: str) -> None:
    """The copy wants what the kata wants of a refusal: ValueError, with a message."""
    text = ("class Solution:\n"
            "    def apply_temperature(self, logits, temperature):\n"
            "        if temperature <= 0:\n"
            f"            raise {raised}\n"
            "        return logits / temperature\n")
    copy = learner(small_copy, tmp_path, {"temperature": text})
    graded = practice_grade(copy, "temperature", "--json", str(tmp_path / "grade.json"))
    assert graded.returncode == 1, graded.stdout + graded.stderr
    tests = json.loads((tmp_path / "grade.json").read_text("utf-8"))["tests"]
    failed = [t for t in tests if t["status"] == "fail"]
    assert len(failed) == 5 and all(says in t["message"] for t in failed), failed
    assert all(t["status"] == "pass" for t in tests if not t["check"].startswith("refusal: "))


@pytest.fixture(scope="module")
def generator_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    copy = tmp_path_factory.mktemp("generators") / "copy"
    write_release(copy, only=frozenset({"sample", "batches"}))
    return copy


@pytest.mark.parametrize(("slug", "name"), [
    ("sample", "not_restored"), ("batches", "rewound"), ("batches", "extra_draw")])
def test_the_copy_wants_the_generator_where_the_kata_does(
        generator_copy: Path, tmp_path: Path, slug: str, name: str) -> None:
    """A right answer that leaves the caller's generator elsewhere than the reference
    does (sample's not put back, batches' put back or drawn from once more) fails the
    copy's grade, as it fails the kata's; the same file with the generator left right
    passes."""
    copy = learner(generator_copy, tmp_path, {slug: mistaken(slug, name)})
    out = tmp_path / "grade.json"
    graded = practice_grade(copy, slug, "--json", str(out))
    assert graded.returncode == 1, graded.stdout + graded.stderr
    failed = [t for t in json.loads(out.read_text("utf-8"))["tests"] if t["status"] == "fail"]
    assert failed and all("the right answer, but the generator `generator` is left in "
                          "another state" in t["message"] for t in failed), failed
    base = (examples(slug) / spec_of(slug)["base"]).read_text("utf-8")
    right = learner(generator_copy, tmp_path / "right", {slug: base})
    assert practice_grade(right, slug).returncode == 0


@pytest.mark.parametrize(("name", "mistake"), [("global_generator", "NOT_THE_GENERATOR"),
                                               ("argmax", "ARGMAX")])
def test_the_copy_names_a_draw_without_the_generator_as_the_kata_does(
        generator_copy: Path, tmp_path: Path, name: str, mistake: str) -> None:
    """No stored answer shows a draw from PyTorch's global random state: the copy calls
    the learner's sample() again on the kata's probe, and names the mistake in the
    kata's words, with the same id, its draws as evidence."""
    from grader.grading.judging import generator_draws

    named = getattr(generator_draws, mistake).named("sample")
    expected = spec_of("sample")["mistakes"][name]
    assert named.id == expected["mistake"]  # the id the kata's grade of this file names
    copy = learner(generator_copy, tmp_path, {"sample": mistaken("sample", name)})
    out = tmp_path / "grade.json"
    graded = practice_grade(copy, "sample", "--json", str(out))
    assert graded.returncode == 1, graded.stdout + graded.stderr
    failed = [t for t in json.loads(out.read_text("utf-8"))["tests"] if t["status"] == "fail"]
    assert failed, graded.stdout
    for test in failed:
        assert test["mistake"] is not None and test["mistake"]["id"] == named.id, test
        said = re.split(r"\n(?:the inputs of |its inputs:)", test["message"])[0]
        assert said.endswith(named.said), test  # then the case's inputs, as in the kata
        assert test["mistake"]["hint"] == named.hint
    if mistake == "NOT_THE_GENERATOR":
        assert "sample() drew tokens" in graded.stdout, graded.stdout
    assert expected["never"] not in graded.stdout, graded.stdout


def test_a_cases_answer_and_where_it_leaves_the_generator_come_from_one_run() -> None:
    """The copy stores where the reference leaves a case's generator from the run that
    gave its answer, not from a second run of the reference."""
    import torch

    from grader.grading.contracts.declaring import load_check_module
    from grader.grading.subject.reference import load_reference
    from grader.release.build import live_answer, reference_call
    from grader.release.practice import codec

    problem = BY_SLUG["batches"]
    contract = load_check_module(problem).CONTRACT
    method = reference_call(contract, load_reference(problem))
    runs: list[tuple] = []
    args = next(iter(contract.case_args.values()))
    answer, left = live_answer(contract, lambda *ran: runs.append(ran) or method(*ran), args)
    (ran,) = runs
    moved = {i: a for i, a in enumerate(ran) if isinstance(a, torch.Generator)}
    assert answer[0] == "value" and moved and left == codec.encode(moved)
    # batches draws from it: where it is left is not where the case's own generator is.
    assert all(not torch.equal(a.get_state(), args[i].get_state()) for i, a in moved.items())


def test_a_stored_value_holds_no_model_the_copy_has_no_program_of() -> None:
    """A case stores a model as the spec of its exported program, its sizes in one order;
    any other spec (a hidden model's, whose handle each grade draws anew) is refused, as
    a value the copy cannot run, so two releases write the same bytes."""
    import torch

    from grader.model.spec import ModelSpec
    from grader.release.models import Models
    from grader.release.practice import codec

    models = Models()
    one, other = (models.exported(ModelSpec("random", config, 7))
                  for config in ({"n_head": 2, "n_embd": 8}, {"n_embd": 8, "n_head": 2}))
    assert codec.encode(one) == codec.encode(other)
    assert codec.encode(models.exported(ModelSpec("shipped", {"n_layer": 4}))) == codec.encode(
        models.exported(ModelSpec("shipped")))
    spec, tensor, held = codec.wire.decode(json.loads(json.dumps(
        codec.encode([one, torch.arange(3), {"k": (1, float("inf"))}]))))
    assert codec.model_name(spec) == codec.model_name(ModelSpec("random", {"n_embd": 8,
                                                                         "n_head": 2}, 7))
    assert torch.equal(tensor, torch.arange(3)) and held == {"k": (1, float("inf"))}
    for hidden in (ModelSpec("hidden", {"n_embd": 8}, 12345), ModelSpec("random", {}, 1)):
        with pytest.raises(TypeError, match="the copy holds no program of it"):
            codec.encode([torch.zeros(1), {"model": hidden}])


def test_the_copys_cases_are_built_on_one_thread_whatever_was_built_before() -> None:
    """rope's cases are heads of the modern model: built on two threads, 148 of one
    case's entries differ in their last bit from one thread's, and a copy written in a
    process that had graded rope first held those."""
    import torch

    from grader.grading.contracts.declaring import load_check_module
    from grader.registry import find
    from grader.release.build import practice_cases
    from grader.release.models import Models
    from grader.release.practice import codec

    contract = load_check_module(find("rope")).CONTRACT
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        (one_thread,) = contract.cases()["queries-of-the-cat"][:1]
        torch.set_num_threads(2)
        contract.__dict__.pop("case_args", None)
        assert contract.case_args  # the check's own, built on two threads
        torch.set_num_threads(threads)
        stored = practice_cases(Models(), frozenset({"rope"}), lambda _: None)
    finally:
        torch.set_num_threads(threads)
        contract.__dict__.pop("case_args", None)
    case = stored["problems"]["rope"]["parts"][0]["cases"]["queries-of-the-cat"]
    assert torch.equal(codec.decode(case["args"])[0], one_thread)


def test_the_copys_grade_speaks_the_language_in_use(small_copy: Path, tmp_path: Path) -> None:
    """In Chinese, a practice grade names its cases, drawn examples and refusals in
    Chinese, and a tensor as the kata describes one; the JSON's mistake ids stay ids."""
    copy = learner(small_copy, tmp_path, {"temperature": mistaken("temperature", "multiply")})
    code = COPY_ONLY + "from grader.cli.main import main; sys.exit(main(sys.argv[1:]))"
    out = tmp_path / "grade.json"
    graded = subprocess.run([sys.executable, "-I", "-B", "-c", code, "--lang", "zh", "grade",
                             "temperature", "-v", "--json", str(out)], cwd=copy,
                            capture_output=True, text=True, encoding="utf-8", check=False)
    assert graded.returncode == 1, graded.stdout + graded.stderr
    checks = [t["check"] for t in json.loads(out.read_text("utf-8"))["tests"]]
    assert any(c.startswith("用例 ") for c in checks), checks
    assert "随机示例" in checks, checks
    assert any(c.startswith("拒绝：") for c in checks), checks
    assert not any(c.startswith(("case ", "drawn example", "refusal: ")) for c in checks)
    assert "张量" in graded.stdout and "torch.float32 tensor" not in graded.stdout, graded.stdout


def test_a_learners_repository_keeps_out_what_the_readme_installs(
        small_copy: Path, tmp_path: Path) -> None:
    """The copy's .gitignore keeps the venv (torch alone is over GitHub's 100 MB file
    limit), the grader's record and the trained runs out of `git add -A`; solutions in."""
    copy = learner(small_copy, tmp_path, {})
    subprocess.run(["git", "init", "-q", str(copy)], check=True)
    made = [".venv/lib/torch/lib/libtorch_cpu.so", "gpt_kata_practice.egg-info/PKG-INFO",
            ".gpt-kata/status.json", "runs/mine/model.safetensors",
            "problems/08-temperature/__pycache__/solution.cpython-311.pyc",
            # what `gpt-kata reset` keeps of the file it replaced
            "problems/08-temperature/solution.py.2026-12-07T08-15-00.bak"]
    ours = "problems/08-temperature/solution.py"
    ignored = subprocess.run(["git", "check-ignore", *made, ours], cwd=copy,
                             capture_output=True, text=True, check=False).stdout.split()
    assert ignored == made


def test_bpe_is_practised_on_its_three_methods(small_copy: Path, tmp_path: Path) -> None:
    """train_bpe has goldens; encode and decode are stored from the reference's answers
    when the copy is written, and their mistakes are named on their own cases."""
    stored = json.loads((small_copy / PACKAGE / "cases.json").read_text("utf-8"))
    parts = stored["problems"]["bpe"]["parts"]
    assert [p["method"] for p in parts] == ["train_bpe", "encode", "decode"]
    assert all(p["cases"] and p["examples"] for p in parts)
    copy = learner(small_copy, tmp_path, {"bpe": BY_SLUG["bpe"].reference.read_text("utf-8")})
    graded = practice_grade(copy, "bpe")
    assert graded.returncode == 0, graded.stdout + graded.stderr
    # a part's drawn examples are one check, as the kata's drawn test is one
    total = sum(len(p["cases"]) + bool(p["examples"]) + len(p.get("refusals", {}))
                for p in parts)
    assert parts[0]["refusals"], "train_bpe refuses a vocabulary below 256"
    assert f"{total}/{total} checks pass" in graded.stdout, graded.stdout
    for name, method in (("encode_in_reverse", "encode"), ("decode_latin1", "decode")):
        (copy / "problems" / BY_SLUG["bpe"].folder / "solution.py").write_text(
            mistaken("bpe", name), "utf-8")
        out = tmp_path / f"{name}.json"
        graded = practice_grade(copy, "bpe", "--json", str(out))
        assert graded.returncode == 1, graded.stdout + graded.stderr
        failed = [t for t in json.loads(out.read_text("utf-8"))["tests"]
                  if t["status"] == "fail"]
        says = spec_of("bpe")["mistakes"][name]["says"]
        named = [t for t in failed if t["mistake"] and says in t["mistake"]["name"]]
        assert named, failed
        assert all(f": {method}() " in t["name"] for t in named), named


# -- stream: its WordStreamer practised, stream_generate() not -----------------------------
@pytest.fixture(scope="module")
def stream_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    copy = tmp_path_factory.mktemp("stream") / "copy"
    write_release(copy, only=frozenset({"stream"}))
    return copy


def test_streams_word_streamer_is_practised_and_stream_generate_says_why(
        stream_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """WordStreamer runs through the copy's own driver against stored callbacks, judged
    per put() as the full check judges them (a callback per word passes too);
    stream_generate(), judged by how it calls the model, is named in one line."""
    stored = json.loads((stream_copy / PACKAGE / "cases.json").read_text("utf-8"))
    problem = stored["problems"]["stream"]
    assert "stream" not in stored["not_practised"]
    assert [p["method"] for p in problem["parts"]] == ["WordStreamer"]
    why = problem["not_practised"]["stream_generate"]
    assert why and "\n" not in why
    note = f"  ? stream_generate() is not practised here: {why}"
    folder = BY_SLUG["stream"].folder
    for text in (BY_SLUG["stream"].reference.read_text("utf-8"),
                 (examples("stream") / "word_by_word_lookahead.py").read_text("utf-8")):
        copy = learner(stream_copy, tmp_path / str(len(text)), {"stream": text})
        graded = practice_grade(copy, "stream")
        assert graded.returncode == 0, graded.stdout + graded.stderr
        total = sum(len(p["cases"]) + bool(p["examples"]) for p in problem["parts"])
        assert any(line.startswith(f"✓ {folder}") and f"{total}/{total} checks pass" in line
                   for line in graded.stdout.splitlines()), graded.stdout
        lines = graded.stdout.splitlines()
        assert lines.count(note) == 1, graded.stdout
        # under the problem's result, as the report shows it
        assert lines[lines.index(note) - 1].startswith(f"✓ {folder}"), graded.stdout
    starter = practice_grade(stream_copy, "stream")
    assert starter.returncode == 1, starter.stdout + starter.stderr
    assert any(line.startswith(f"✗ {folder}") and "not implemented yet" in line
               for line in starter.stdout.splitlines()), starter.stdout
    assert note in starter.stdout.splitlines(), starter.stdout
    (copy / "problems" / folder / "solution.py").write_text(
        mistaken("stream", "streamer_spaces_only"), "utf-8")
    out = tmp_path / "grade.json"
    graded = practice_grade(copy, "stream", "--json", str(out))
    assert graded.returncode == 1, graded.stdout + graded.stderr
    report = json.loads(out.read_text("utf-8"))
    named = {t["mistake"]["id"] for t in report["tests"] if t["mistake"]}
    assert named == {spec_of("stream")["mistakes"]["streamer_spaces_only"]["mistake"]}, named
    assert report["mode"] == "practice" and report["problems"][0]["problem"] == "stream"
    # Its inputs in the kata's own lines, the calls of put() and end(), not the pieces
    # as one list of arguments.
    failed = next(t for t in report["tests"] if t["status"] == "fail")
    assert "put() called" in failed["message"] and "then end()" in failed["message"], failed
    # In the language in use: the copy stores the kata's lines in each.
    with speaking("zh"):
        then_end = tr("then end()")
    monkeypatch.setenv("GPT_KATA_LANG", "zh")
    graded = practice_grade(copy, "stream", "--json", str(out))
    failed = next(t for t in json.loads(out.read_text("utf-8"))["tests"] if t["status"] == "fail")
    assert then_end != "then end()" and then_end in failed["message"], failed



# -- training, from exported GPTs -------------------------------------------------------------
@pytest.fixture(scope="module")
def training_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    copy = tmp_path_factory.mktemp("training") / "copy"
    write_release(copy, only=frozenset({"train-step", "train-loop"}))
    return copy


def test_train_step_is_practised_from_stored_runs(training_copy: Path, tmp_path: Path) -> None:
    """The reference passes; a named mistake is named; a step that returns the tensor is
    told its loss is not a float. The copy's driver trains GPTs built from exported
    programs: the grader is out of reach (practice_grade)."""
    stored = json.loads((training_copy / PACKAGE / "cases.json").read_text("utf-8"))
    assert "train-step" in stored["problems"] and stored["trainable"]
    copy = learner(training_copy, tmp_path,
                   {"train-step": BY_SLUG["train-step"].reference.read_text("utf-8")})
    graded = practice_grade(copy, "train-step")
    assert graded.returncode == 0, graded.stdout + graded.stderr
    for name, says in (("no_zero_grad", "never zero the gradients"),
                       ("returns_the_tensor", "not a float")):
        (copy / "problems" / BY_SLUG["train-step"].folder / "solution.py").write_text(
            mistaken("train-step", name), "utf-8")
        graded = practice_grade(copy, "train-step")
        assert graded.returncode == 1, graded.stdout + graded.stderr
        assert says in graded.stdout, graded.stdout


def test_a_loops_own_schedule_is_named_in_the_copy_as_in_the_kata(training_copy: Path,
                                                                  tmp_path: Path) -> None:
    """A warm-up that starts from a rate of 0: the copy names the step and its rate from
    the rates its stored runs read, as the instructor's grade does (test_submissions)."""
    copy = learner(training_copy, tmp_path,
                   {"train-loop": mistaken("train-loop", "warm_up_from_zero")})
    graded = practice_grade(copy, "train-loop")
    assert graded.returncode == 1, graded.stdout + graded.stderr
    assert spec_of("train-loop")["mistakes"]["warm_up_from_zero"]["says"] in graded.stdout, \
        graded.stdout


def test_the_copys_trainable_gpt_trains_as_the_graders(training_copy: Path) -> None:
    """Built from its program, the GPT has the grader's parameters by the same names,
    the same weights, and a training step on it gives the same loss and weights."""
    import importlib.util

    import torch
    import torch.nn.functional as F

    from grader.model import artifacts

    sys.path.insert(0, str(training_copy))
    try:
        spec = importlib.util.spec_from_file_location(
            "copys_training", training_copy / PACKAGE / "training.py")
        assert spec and spec.loader
        training = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(training)
        key = next(iter(training.stored()["trainable"]))
        made = json.loads(key)
        ours = training.trainable_model(made["config"], made["seed"])
        theirs = artifacts.trainable_model(made["config"], made["seed"])
    finally:
        sys.path.remove(str(training_copy))
    assert ours.training and not ours.eval().training and ours.train().training
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for name, weight in theirs.state_dict().items():
        assert torch.equal(ours.state_dict()[name], weight), name
    generator = torch.Generator().manual_seed(0)
    vocab, length = made["config"]["vocab_size"], made["config"]["context_length"]
    x, y = (torch.randint(vocab, (3, length), generator=generator) for _ in range(2))
    losses = []
    for model in (ours, theirs):
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
        with torch.enable_grad():
            logits = model(x)
            loss = F.cross_entropy(logits.view(-1, vocab), y.view(-1))
            loss.backward()
            optimizer.step()
        losses.append(loss.item())
    assert losses[0] == losses[1]
    for name, weight in theirs.state_dict().items():
        assert torch.allclose(ours.state_dict()[name], weight, rtol=0, atol=1e-6), name


def test_writing_the_copy_says_each_step(tmp_path: Path) -> None:
    """A release takes minutes: each problem's practice cases, then the models, are
    said as they start (`gpt-kata release` prints them on stderr)."""
    steps: list[str] = []
    write_release(tmp_path / "copy", only=frozenset({"softmax", "decode"}),
                  progress=steps.append)
    assert steps[:2] == ["practice cases 1/2: 03-softmax", "practice cases 2/2: 05-decode"]
    assert steps[-1].startswith("exporting the ") and steps[-1].endswith(
        " models the cases and the statements' examples run")


def test_a_graded_class_copy_gives_no_answer_away(tmp_path: Path) -> None:
    """`release --no-answer-hints`: no problem's last hint and no mistake's fix, in any
    language, anywhere in the copy; the other hints and the mistakes' names stay."""
    import polib

    from grader.grading.judging.cached_steps import WHOLE_CONTEXT
    from grader.locale import catalog
    from grader.release.answers import every_fix

    copy = tmp_path / "graded"
    write_release(copy, only=frozenset({"temperature"}), answer_hints=False)
    registry = tomllib.loads((copy / "problems" / "registry.toml").read_text("utf-8"))
    kept = {e["slug"]: e["hints"] for e in registry["problem"]}
    answers = [p.hints[-1] for p in problems()]
    zh = catalog("zh")
    for p in problems():
        assert kept[p.slug] == list(p.hints[:-1]), p.slug
    cases = json.loads((copy / "gpt_kata_practice" / "cases.json").read_text("utf-8"))
    named = [m for part in cases["problems"]["temperature"]["parts"]
             for case in [*part["cases"].values(), *part["examples"].values(),
                          *part.get("refusals", {}).values()]
             for m in case["mistakes"]]
    assert named and all(m["name"] and not m["hint"] for m in named)
    # Every problem's fixes, the one the learner's runtime holds in its code too (how a
    # KV cache is called, judged from the calls).
    fixes = every_fix()
    assert WHOLE_CONTEXT.hint in fixes and {m.hint for m in mistakes_of_temperature()} <= fixes
    runtime = (copy / "grader" / "grading" / "judging" / "cached_steps.py").read_text("utf-8")
    assert 'WHOLE_CONTEXT_FIX = ""\n' in runtime  # the practice grade names it, without
    text = "\n".join(f.read_text("utf-8") for f in copy.rglob("*")
                     if f.is_file() and f.suffix in (".toml", ".json", ".po", ".md", ".py"))
    for secret in [*answers, *fixes]:
        assert secret not in text or secret in OPEN_TEXTS, secret
        assert zh.get(secret, "\0") not in text, zh.get(secret)
    names = {e.msgid for e in polib.pofile(str(copy / "grader" / "locale" / "zh"
                                               / "problems.po"))}
    assert problems()[0].hints[0] in names and problems()[0].hints[-1] not in names


def mistakes_of_temperature() -> list:
    import importlib

    from grader.grading.values.failures import Mistake
    from grader.maintainer.catalogs import mistakes_in

    module = importlib.import_module("grader.checks.temperature.check_temperature")
    return mistakes_in(module, Mistake)


# An answer hint a statement also says in full (it is then no secret): none today.
OPEN_TEXTS: frozenset[str] = frozenset({
    # A mistake's fix that is also the note on the error it raises (train_step's
    # `explaining`): said to whoever meets that error, in any copy.
    "F.cross_entropy reads dimension 1 as the classes: flatten the logits to "
    "(B*T, vocab_size) and the targets to (B*T,) first",
})


def test_a_trainable_gpt_of_a_config_traced_already_is_its_own_trace_byte_for_byte(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The release traces each trainable GPT's architecture once and gives a GPT of the
    same config from another seed that program with its own weights: it is the program
    tracing that GPT itself writes, and another config is traced afresh."""
    from grader.model import artifacts
    from grader.release import models
    from grader.release.models import exported_program, trainable_program

    traces = []
    trace = models.gpt_program
    monkeypatch.setattr(models, "gpt_program",
                        lambda model, trainable: traces.append(model) or trace(model, trainable))
    small = {"vocab_size": 6, "context_length": 4, "n_layer": 1, "n_head": 2, "n_embd": 8}
    wider = {**small, "n_embd": 16}
    traced: dict = {}
    first = trainable_program(artifacts.trainable_model(small, 0), small, traced)
    second = trainable_program(artifacts.trainable_model(small, 1), small, traced)
    other = trainable_program(artifacts.trainable_model(wider, 1), wider, traced)
    assert len(traces) == 2  # one a config
    monkeypatch.undo()
    assert first != second  # the weights differ
    assert second == exported_program(artifacts.trainable_model(small, 1), trainable=True)
    assert other == exported_program(artifacts.trainable_model(wider, 1), trainable=True)


STAND_IN = '''
from dataclasses import dataclass


@dataclass
class Result:
    slug: str
    unavailable: str = ""
    kind: str = ""


class Reached:
    pass


def timed_out(reached, plan, said, kind):
    raise AssertionError("no time-out in this stand-in")


def grade_problem(slug, path, running, told):
    import matplotlib

    return Result(slug, unavailable=matplotlib.get_backend())
'''


@pytest.mark.parametrize("spawned", ["0", "1"], ids=["forked", "spawned"])
def test_the_practice_runs_draw_off_screen(spawned: str, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A learner's plt.show() in the copy's process for their code opened a window on a
    desktop (macOS's backend here) and waited for it to close, until it ran out of time.
    The copy's grade is stood in for: what the process sees is the question."""
    package = tmp_path / "gpt_kata_practice"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "practice_grade.py").write_text(STAND_IN)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("MPLBACKEND", "macosx")
    monkeypatch.setenv("GPT_KATA_SPAWN_WORKERS", spawned)
    imported_afresh(monkeypatch, "gpt_kata_practice", "gpt_kata_practice.practice_grade",
                    "grader.release.practice.runs")
    from grader.release.practice.runs import PracticeRuns

    with PracticeRuns(60.0, 60.0) as runs:
        result = runs.grade("softmax", tmp_path / "solution.py")
    assert result.unavailable.lower() == "agg"


def test_an_error_in_an_earlier_solution_names_its_file_in_the_copy(
        small_copy: Path, tmp_path: Path) -> None:
    """An error raised in the earlier file that solution_of took is shown in that file,
    "03-softmax/solution.py:3", as the kata's worker shows it."""
    softmax = ("class Solution:\n"
               "    def softmax(self, logits):\n"
               "        return logits / no_such_name\n")
    temperature = ("from grader.reuse import solution_of\n"
                   "Softmax = solution_of('softmax')\n"
                   "class Solution:\n"
                   "    def apply_temperature(self, logits, temperature):\n"
                   "        return Softmax().softmax(logits / temperature)\n")
    copy = learner(small_copy, tmp_path, {"temperature": temperature, "softmax": softmax})
    graded = practice_grade(copy, "temperature", "--json", str(tmp_path / "grade.json"))
    assert graded.returncode == 1, graded.stdout + graded.stderr
    messages = [t["message"] for t in
                json.loads((tmp_path / "grade.json").read_text("utf-8"))["tests"]]
    assert any("03-softmax/solution.py:3: NameError" in m for m in messages), messages


@pytest.fixture(scope="module")
def attention_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    copy = tmp_path_factory.mktemp("attention") / "copy"
    write_release(copy, only=frozenset({"multi-head-attention"}))
    return copy


def test_a_module_that_drops_in_evaluation_mode_is_told_so_in_the_copy(
        attention_copy: Path, tmp_path: Path) -> None:
    """The copy does not practise the check of the same output twice, so F.dropout(x, p)
    left on gave wrong outputs and no reason; each such case now says that the module,
    called again, gave another output, as the kata's grade says it, with the fix for
    hint. A wrong module that repeats itself is not said to drop."""
    note = "your module gave another output: is a dropout left active?"
    slug = "multi-head-attention"
    copy = learner(attention_copy, tmp_path, {slug: mistaken(slug, "dropout_left_active")})
    out = tmp_path / "grade.json"
    graded = practice_grade(copy, slug, "--json", str(out))
    assert graded.returncode == 1, graded.stdout + graded.stderr
    failed = [t for t in json.loads(out.read_text("utf-8"))["tests"] if t["status"] == "fail"]
    # One token's only weight, 1, dropped or not, may well come out the same twice.
    long = [t for t in failed if t["check"] in ("case a-sentence", "case full-window")]
    assert len(long) == 2 and all(note in t["message"] for t in long), failed
    assert note in graded.stdout, graded.stdout
    steady = learner(attention_copy, tmp_path / "steady",
                     {slug: mistaken(slug, "scaled_by_n_embd")})
    graded = practice_grade(steady, slug)
    assert graded.returncode == 1 and "dropout" not in graded.stdout, graded.stdout


# The right answer on half the calls; it prints a lot on each.
LOUD = '''class Solution:
    calls = 0

    def apply_temperature(self, logits, temperature):
        if temperature <= 0:
            raise ValueError("temperature must be > 0")
        Solution.calls += 1
        for i in range(20_000):
            print("debugging", Solution.calls, i)
        return logits / temperature if Solution.calls % 2 else logits * temperature
'''


def test_what_a_case_prints_and_its_inputs_are_shown_under_its_failure(
        small_copy: Path, tmp_path: Path) -> None:
    """The copy's grade poured a solution's prints onto the terminal, whole (51 MB for
    one that printed in a loop), saying nothing of which case printed them."""
    copy = learner(small_copy, tmp_path, {"temperature": LOUD})
    out = tmp_path / "grade.json"
    graded = practice_grade(copy, "temperature", "--json", str(out))
    assert graded.returncode == 1, graded.stdout[-3000:] + graded.stderr
    assert len(graded.stdout) < 20_000, graded.stdout[:3000]  # not 20,000 lines a call
    assert "your code printed:" in graded.stdout and "debugging" in graded.stdout
    failed = [t for t in json.loads(out.read_text("utf-8"))["tests"] if t["status"] == "fail"]
    assert failed and all(t["output"].startswith("debugging ") for t in failed), failed
    # Each failure's inputs too, as the kata gives them: the copy said only "case NAME".
    assert all(set(t["inputs"]) == {"logits", "temperature"} for t in failed), failed
    assert "the inputs of case " in graded.stdout and "  temperature: " in graded.stdout


def test_an_input_changed_in_place_is_shown_as_it_was_handed(
        small_copy: Path, tmp_path: Path) -> None:
    """The inputs under a failure are the case's, not what the call left of them."""
    zeroing = ("class Solution:\n    def apply_temperature(self, logits, temperature):\n"
               "        if temperature <= 0:\n            raise ValueError('> 0')\n"
               "        answer = logits / temperature\n        logits.zero_()\n"
               "        return answer\n")
    copy = learner(small_copy, tmp_path, {"temperature": zeroing})
    out = tmp_path / "grade.json"
    graded = practice_grade(copy, "temperature", "--json", str(out))
    assert graded.returncode == 1, graded.stdout + graded.stderr
    failed = [t for t in json.loads(out.read_text("utf-8"))["tests"] if t["status"] == "fail"]
    assert failed and all("changed its input `logits`" in t["message"] for t in failed), failed
    # As handed: the fixed cases' logits of the shipped model, not the zeros the call left.
    (sharpen,) = [t for t in failed if t["name"].endswith(": case sharpen")]
    assert " from -7.195 to 6.278" in sharpen["inputs"]["logits"], sharpen


def test_a_failures_model_and_answer_are_described_as_the_kata_describes_them(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    """The copy's inputs showed a model as the program that runs it, nine lines of
    `ExportedGPT(...)` in the terminal and the JSON report, where the kata says "the
    shipped model"; and its JSON report's `got` was null for every failure."""
    copy = tmp_path_factory.mktemp("generate") / "copy"
    write_release(copy, only=frozenset({"generate"}))
    graded_copy = learner(copy, tmp_path, {"generate": mistaken("generate", "crop_first")})
    out = tmp_path / "grade.json"
    graded = practice_grade(graded_copy, "generate", "-v", "--json", str(out))
    assert graded.returncode == 1, graded.stdout[-3000:] + graded.stderr
    assert "ExportedGPT" not in graded.stdout and "GraphModule" not in graded.stdout
    failed = [t for t in json.loads(out.read_text("utf-8"))["tests"] if t["status"] == "fail"]
    assert failed and all(t["got"] and t["got"].startswith("'") for t in failed), failed
    models = {t["inputs"]["model"] for t in failed}
    assert "the shipped model" in models, models
    assert all(m == "the shipped model" or m.startswith("a small untrained GPT (vocab_size ")
               for m in models), models


def test_the_copys_drawn_examples_count_as_one_check_as_the_katas_drawn_test_does(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    """The copy counted each of a part's three drawn examples as a check, so the same
    file scored otherwise there than in the instructor's grade (06 not restoring its
    generator: 6 points in the copy, 3 in the kata)."""
    copy = tmp_path_factory.mktemp("generate-count") / "copy"
    write_release(copy, only=frozenset({"generate"}))
    wrong = mistaken("generate", "no_restore")
    out = tmp_path / "copy.json"
    graded = practice_grade(learner(copy, tmp_path, {"generate": wrong}), "generate",
                            "--json", str(out))
    assert graded.returncode == 1, graded.stdout + graded.stderr
    in_copy = json.loads(out.read_text("utf-8"))
    file = tmp_path / "no_restore.py"
    file.write_text(wrong, "utf-8")
    (tmp_path / "kata").mkdir()
    in_kata = run_grade("generate", "--submission", file, tmp_path=tmp_path / "kata").report
    assert in_kata is not None
    copy_entry, kata_entry = in_copy["problems"][0], in_kata["problems"][0]
    assert copy_entry["total"] == kata_entry["total"], (copy_entry, kata_entry)
    assert [t["check"] for t in in_copy["tests"]].count("drawn examples") == 1


def test_a_parts_drawn_examples_fail_as_one_with_the_first_failures_evidence() -> None:
    from grader.learner.practice import counted

    def check(name: str, status: str, drawn: str = "") -> dict:
        failing = status == "fail"
        return {"name": name, "status": status, "mistake": None, "inputs":
                f"its inputs: {name}" if failing else None, **({"drawn": drawn} if drawn else {}),
                "message": f"wrong in {name}\nits inputs: {name}" if failing else None}

    merged = counted([check("case a", "pass"),
                      check("encode() drawn example 1", "pass", "encode() drawn examples"),
                      check("encode() drawn example 2", "fail", "encode() drawn examples"),
                      check("encode() drawn example 3", "fail", "encode() drawn examples"),
                      check("decode() drawn example 1", "pass", "decode() drawn examples")])
    assert [(c["name"], c["status"]) for c in merged] == [
        ("case a", "pass"), ("encode() drawn examples", "fail"),
        ("decode() drawn examples", "pass")]
    assert merged[1]["message"] == (
        "wrong in encode() drawn example 2\nthe inputs of encode() drawn example 2 (2 of the "
        "3 drawn examples fail): encode() drawn example 2")
    assert merged[1]["label"] == "encode() drawn example 2"
    # Examples an earlier check's time-out left unrun say why, under no empty heading.
    not_run = {"status": "fail", "mistake": None, "inputs": "", "drawn": "drawn examples",
               "message": "not run: generate(): time out, in an earlier check of this problem"}
    (unrun,) = counted([{**not_run, "name": f"drawn example {n}"} for n in (1, 2, 3)])
    assert unrun["message"] == not_run["message"], unrun


def test_an_input_returned_as_it_came_fails_as_in_the_kata(
        small_copy: Path, tmp_path: Path) -> None:
    """Temperature 1 changes nothing; returning the logits themselves then hands the
    caller's own tensor back, where the statement asks for a new one."""
    early = ("class Solution:\n    def apply_temperature(self, logits, temperature):\n"
             "        if temperature <= 0:\n            raise ValueError('> 0')\n"
             "        if temperature == 1:\n            return logits\n"
             "        return logits / temperature\n")
    copy = learner(small_copy, tmp_path, {"temperature": early})
    graded = practice_grade(copy, "temperature")
    assert graded.returncode == 1, graded.stdout + graded.stderr
    assert "returned its input `logits` itself (or a view of it), not a new tensor" in \
        graded.stdout, graded.stdout


def test_a_tensor_where_a_float_is_expected_is_said_so(tmp_path_factory: pytest.TempPathFactory,
                                                        tmp_path: Path) -> None:
    """A learning rate of the right value as a 0-d tensor was shown as "returned float64
    tensor of shape (): 0.003; expected 0.003", which reads as equal; the kata says a
    Tensor is not a float."""
    copy = tmp_path_factory.mktemp("schedule") / "copy"
    write_release(copy, only=frozenset({"lr-schedule"}))
    reference = (paths.SOLUTIONS / BY_SLUG["lr-schedule"].folder / "solution.py").read_text()
    tensor = reference.replace("import math\n", "import math\n\nimport torch\n", 1)
    tensor = tensor.replace("    def learning_rate(", "    def _rate(", 1) + (
        "\n    def learning_rate(self, *args):\n"
        "        return torch.tensor(self._rate(*args), dtype=torch.float64)\n")
    graded = practice_grade(learner(copy, tmp_path, {"lr-schedule": tensor}), "lr-schedule")
    assert graded.returncode == 1, graded.stdout + graded.stderr
    assert "learning_rate() returned a Tensor, not a float" in graded.stdout, graded.stdout


def test_a_model_called_for_no_text_fails_in_the_copy_as_in_the_kata(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    """greedy's logits computed one step ahead call the model with new_chars=0, which the
    statement rules out: the kata fails it, and so does the copy, by the same rule."""
    copy = tmp_path_factory.mktemp("greedy") / "copy"
    write_release(copy, only=frozenset({"greedy"}))
    ahead = (examples("greedy") / "logits_one_step_ahead.py").read_text("utf-8")
    graded = practice_grade(learner(copy, tmp_path, {"greedy": ahead}), "greedy", "-v")
    assert graded.returncode == 1, graded.stdout + graded.stderr
    assert "greedy() called the model once with new_chars=0" in graded.stdout, graded.stdout
    right = practice_grade(learner(copy, tmp_path / "right", {
        "greedy": BY_SLUG["greedy"].reference.read_text("utf-8")}), "greedy")
    assert right.returncode == 0, right.stdout + right.stderr


def test_a_time_out_in_one_case_fails_it_and_the_rest_as_in_the_kata(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    """An endless loop on one input (k = 2) made the whole problem unavailable in the
    copy, 0 points, where the kata keeps the checks before it, fails that one with its
    inputs and says the rest were not run: 4 of 10. Both now count alike."""
    copy = tmp_path_factory.mktemp("top-k-endless") / "copy"
    write_release(copy, only=frozenset({"top-k"}))
    endless = BY_SLUG["top-k"].reference.read_text("utf-8").replace(
        "        k = min(k, logits.shape[-1])",
        "        while k == 2:\n            pass\n        k = min(k, logits.shape[-1])", 1)
    assert "while k == 2" in endless
    out = tmp_path / "copy.json"
    graded = practice_grade(learner(copy, tmp_path, {"top-k": endless}), "top-k",
                            "--timeout", "2", "--json", str(out))
    assert graded.returncode == 1, graded.stdout + graded.stderr
    in_copy = json.loads(out.read_text("utf-8"))
    failed = [t for t in in_copy["tests"] if t["status"] != "pass"]
    stuck = failed[0]
    assert stuck["message"].startswith("top_k_filter(): no answer within 2 seconds"), stuck
    assert "k: 2" in stuck["message"] and stuck["kind"] in ("stuck", "busy"), stuck
    assert failed[1:] and all(t["message"].startswith("not run: top_k_filter(): no answer")
                              for t in failed[1:]), failed
    file = tmp_path / "endless.py"
    file.write_text(endless, "utf-8")
    (tmp_path / "kata").mkdir()
    in_kata = run_grade("top-k", "--submission", file, "--timeout", "2",
                        tmp_path=tmp_path / "kata").report
    assert in_kata is not None
    copy_entry, kata_entry = in_copy["problems"][0], in_kata["problems"][0]
    assert 0 < copy_entry["passed"] < copy_entry["total"], copy_entry
    assert (copy_entry["passed"], copy_entry["total"], copy_entry["score"]) == (
        kata_entry["passed"], kata_entry["total"], kata_entry["score"]), (copy_entry,
                                                                         kata_entry)


def test_a_result_in_another_dtype_is_told_to_keep_the_inputs(
        small_copy: Path, tmp_path: Path) -> None:
    """The copy said "returned float64 tensor of shape (1, 5): [...]; expected float32
    tensor of shape (1, 5): [...]", right but roundabout, where the kata says to keep
    the input's dtype."""
    doubled = ("class Solution:\n    def apply_temperature(self, logits, temperature):\n"
               "        if temperature <= 0:\n            raise ValueError('> 0')\n"
               "        return logits.double() / temperature\n")
    graded = practice_grade(learner(small_copy, tmp_path, {"temperature": doubled}),
                            "temperature")
    assert graded.returncode == 1, graded.stdout + graded.stderr
    assert ("apply_temperature() returned a float64 tensor, expected float32, the dtype of "
            "its input: keep the input's dtype") in graded.stdout, graded.stdout


@pytest.mark.parametrize(("name", "twice"), [
    ("no_mask", "pass"),  # wrong, but the same wrong output twice: the kata's point too
    ("dropout_left_active", "fail"),
    ("no_super_init", "fail"),  # never answers: nothing to compare, no point
])
def test_a_modules_same_output_twice_is_checked_in_the_copy_as_in_the_kata(
        name: str, twice: str, tmp_path_factory: pytest.TempPathFactory,
        tmp_path: Path) -> None:
    """The kata's check of the same output twice was not practised, so a wrong module
    that repeats itself scored a point in the kata and none in the copy (35's
    architectures: 1/10 against 0/10)."""
    copy = tmp_path_factory.getbasetemp() / "head-twice"
    if not copy.exists():
        write_release(copy, only=frozenset({"attention-head"}))
    wrong = mistaken("attention-head", name)
    out = tmp_path / "copy.json"
    graded = practice_grade(learner(copy, tmp_path, {"attention-head": wrong}),
                            "attention-head", "--json", str(out))
    assert graded.returncode == 1, graded.stdout + graded.stderr
    in_copy = json.loads(out.read_text("utf-8"))
    [check] = [t for t in in_copy["tests"] if t["check"] == "the same output twice"]
    assert check["status"] == twice, check
    file = tmp_path / f"{name}.py"
    file.write_text(wrong, "utf-8")
    (tmp_path / "kata").mkdir()
    in_kata = run_grade("attention-head", "--submission", file,
                        tmp_path=tmp_path / "kata").report
    assert in_kata is not None
    copy_entry, kata_entry = in_copy["problems"][0], in_kata["problems"][0]
    assert (copy_entry["passed"], copy_entry["total"], copy_entry["score"]) == (
        kata_entry["passed"], kata_entry["total"], kata_entry["score"]), (copy_entry,
                                                                         kata_entry)


def test_a_parameter_of_another_shape_fails_its_case_in_the_copy_as_in_the_kata(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    """As many key heads as query heads (the statement's pitfall): the copy refused the
    whole file, 0 points, where the kata fails each case whose weights do not fit and
    passes the one with as many key heads."""
    copy = tmp_path_factory.mktemp("gqa") / "copy"
    write_release(copy, only=frozenset({"grouped-query-attention"}))
    out = tmp_path / "copy.json"
    graded = practice_grade(learner(copy, tmp_path, {"grouped-query-attention": mistaken(
        "grouped-query-attention", "as_many_key_heads_as_queries")}),
        "grouped-query-attention", "--json", str(out))
    assert graded.returncode == 1, graded.stdout + graded.stderr
    tests = json.loads(out.read_text("utf-8"))["tests"]
    statuses = {t["check"]: t["status"] for t in tests}
    assert statuses.get("case as-many-key-heads-as-queries") == "pass", statuses
    failed = [t for t in tests if t["status"] == "fail"]
    assert failed and all("k_proj.weight has shape" in t["message"] for t in failed), failed


def test_a_mistake_only_the_problems_own_tolerance_tells_is_named_in_the_copy(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    """The 1e-6 left out of clipping, on gradients of 1e-6: within the tolerance every
    problem shares, so the release did not store it, and the copy failed the case with
    two shapes that read as equal and named nothing; the kata names it. RoPE's angles
    in half precision: the release took one way of making it for right, by the practice
    judge, and the copy named nothing either."""
    copy = tmp_path_factory.mktemp("clip") / "copy"
    write_release(copy, only=frozenset({"clip-grad-norm", "rope"}))
    graded = practice_grade(learner(copy, tmp_path, {
        "clip-grad-norm": mistaken("clip-grad-norm", "no_eps"),
        "rope": mistaken("rope", "angles_in_half_precision")}), "clip-grad-norm", "rope", "-v")
    assert graded.returncode == 1, graded.stdout + graded.stderr
    clip, rope = graded.stdout.split("32-rope", 1)
    assert "This is what happens when you leave out the 1e-6." in clip, graded.stdout
    assert re.search(r"in \[1\]\[\d\], entry \(.*\) is .*, expected ", clip), clip
    # And one that only the practice judge takes for right, which the kata names: the
    # angles in half precision are within its position-aware tolerance on some cases.
    assert "This is what happens when you compute the angles in half precision." in rope, rope
