"""`gpt-kata trace`: a generation run step by step beside the reference's."""

from __future__ import annotations

import io
import re
import struct
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

if sys.version_info >= (3, 11):
    pass
else:  # pragma: no cover
    pass

import pytest
import torch
from conftest import ROOT, run_grade
from learner_examples import mistake

from grader import paths
from grader.cli.main import main
from grader.grading.subject.cases import corpus_prefix, next_token_probs, prompt_ids, seed_state
from grader.grading.subject.reference import load_reference
from grader.learner.tools.trace import load_contract
from grader.learner.tools.trace_steps import Step, first_difference, misled, steps_of, windows
from grader.model import artifacts
from grader.registry import find

CONTEXT_LENGTH = artifacts.load_config().context_length


@pytest.fixture(scope="module")
def crop_first(tmp_path_factory) -> Path:
    """generate's known mistake that crops the wrong end of the context, as a file."""
    return mistake("generate", "crop_first", tmp_path_factory.mktemp("examples"))


def trace(*args: str | Path) -> subprocess.CompletedProcess:
    """`gpt-kata trace ARGS` run in this process: the command's own code and output,
    without the second or more a fresh interpreter spends importing torch.
    (`trace_cli` runs the real command line, as a learner does.)"""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(["trace", *map(str, args)])
        except SystemExit as exc:  # argparse's --help and usage errors
            code = exc.code if isinstance(exc.code, int) else 1
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


def trace_cli(*args: str | Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "grader", "trace", *map(str, args)],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)


def reference_text(prompt: str, new_chars: int) -> str:
    """The reference generate()'s text, run here as the goldens are made."""
    reference = load_reference(find("generate"))
    with torch.no_grad():
        return reference.generate(artifacts.shipped_model(), new_chars, prompt_ids(prompt),
                                  CONTEXT_LENGTH, artifacts.shipped_vocab())


def table_row(stdout: str, step: int) -> str:
    rows = [line for line in stdout.splitlines() if re.match(rf"^[ >]\s*{step}  ", line)]
    assert len(rows) == 1, stdout
    return rows[0]


# -- the steps of a run, from its forward passes ----------------------------------------
def test_windows_follow_a_cache_and_its_rebuilds():
    passes = [([1, 2, 3], 0), ([4], 3), ([5], 4), ([2, 3, 4, 5, 6], 0), ([7], 2)]
    assert windows(passes) == [(1, 2, 3), (1, 2, 3, 4), (1, 2, 3, 4, 5), (2, 3, 4, 5, 6),
                               (5, 6, 7)]


def test_picks_come_from_the_text_or_else_from_the_next_window():
    passes = [([1, 2], 0), ([1, 2, 7], 0), ([1, 2, 7, 8], 0)]
    assert [s.pick for s in steps_of(passes, [7, 8, 9])] == [7, 8, 9]
    # A text cut short (a stop string) hides the last pick; the windows show the others.
    assert [s.pick for s in steps_of(passes, [7])] == [7, 8, None]
    # The prompt in front of the text: the last pick is still the text's last token.
    assert [s.pick for s in steps_of(passes, [1, 2, 7, 8, 9])] == [7, 8, 9]


def test_first_difference_counts_a_run_that_stops_early():
    passes = [([1], 0), ([1, 2], 0)]
    same = steps_of(passes, [2, 3])
    assert first_difference(same, steps_of(passes, [2, 3])) is None
    assert first_difference(same, steps_of(passes, [2, 4])) == 1
    assert first_difference(steps_of(passes[:1], [2]), same) == 1


def test_a_step_the_model_told_nan_strays_from_the_window_read_afresh():
    fresh = torch.tensor([0.5, 0.25, 0.25], dtype=torch.float64)
    probs = {(1, 2): fresh}.get
    step = Step(1, (1, 2), 0, told=fresh.clone())
    assert misled(step, probs) is None
    nan_told = torch.tensor([0.5, float("nan"), 0.25], dtype=torch.float64)
    token, gap = misled(Step(1, (1, 2), 0, told=nan_told), probs)
    assert token == 1 and gap != gap


# -- the command ---------------------------------------------------------------------------
@pytest.mark.parametrize("problem", ["generate", "greedy", "eos-stop", "stream", "kv-cache",
                                     "sampler"])
def test_the_reference_traced_against_itself_differs_nowhere(problem):
    # A prompt two tokens short of the window: the window fills, then slides.
    done = trace(problem, corpus_prefix(CONTEXT_LENGTH - 2), "--reference", "--steps", "6")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no step differs" in done.stdout
    # every case was run with this prompt, but those whose model cannot spell it; the
    # grade's own cases are not what was compared, and the line says so
    assert re.search(r"with your prompt and \w+: no case differs when run with them",
                     done.stdout), done.stdout
    assert "no fixed case differs" not in done.stdout
    assert not re.search(r"^>", done.stdout, flags=re.M)
    assert all(table_row(done.stdout, step) for step in range(1, 7))


def test_cropping_the_wrong_end_differs_at_the_step_where_the_window_first_slides(crop_first):
    # The prompt fills the window exactly: step 1 reads it whole, step 2 must drop its
    # first token, and a crop of the wrong end keeps reading the prompt instead.
    prompt = corpus_prefix(CONTEXT_LENGTH)
    right = reference_text(prompt, 2)
    # The wrong window is step 1's again, and generate() draws with the same seed each
    # step: so its pick is step 1's pick.
    wrong_pick = right[0]
    assert right[1] != wrong_pick, "this prompt must tell the two windows apart"

    done = trace("generate", prompt, "--submission", crop_first, "--steps", "4")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "step 2 is the first that differs" in done.stdout
    assert table_row(done.stdout, 1).startswith(" ")
    assert table_row(done.stdout, 2).startswith(">")
    assert f"your pick {wrong_pick!r}" in done.stdout
    assert f"the reference's {right[1]!r}" in done.stdout
    assert f"the model saw    {prompt[-50:]!r} ({CONTEXT_LENGTH} tokens)" in done.stdout
    should = (prompt + right[0])[-CONTEXT_LENGTH:]
    assert f"where it should  {should!r} ({CONTEXT_LENGTH} tokens)" in done.stdout
    assert "Traceback" not in done.stderr


def test_not_restoring_the_generator_differs_in_the_pick_from_the_same_window(tmp_path):
    wrong = mistake("generate", "no_restore", tmp_path)
    prompt = "Tom"
    right = reference_text(prompt, 2)
    # The mistake, written out: the second draw continues the generator's stream.
    model, itc = artifacts.shipped_model(), artifacts.shipped_vocab()
    generator = torch.Generator()
    generator.set_state(seed_state(0))
    first = torch.multinomial(next_token_probs(model, prompt_ids(prompt)[0].tolist()), 1,
                              generator=generator)
    second = torch.multinomial(
        next_token_probs(model, prompt_ids(prompt + itc[int(first)])[0].tolist()), 1,
        generator=generator)
    assert itc[int(first)] == right[0]
    assert itc[int(second)] != right[1], "the mistake must show within two steps"

    done = trace("generate", prompt, "--submission", wrong, "--steps", "5")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "step 2 is the first that differs" in done.stdout
    assert f"both saw {(prompt + right[0])!r}" in done.stdout
    assert f"your pick {itc[int(second)]!r}" in done.stdout
    assert f"the reference's {right[1]!r}" in done.stdout


def test_a_text_cut_otherwise_after_the_same_steps_is_shown_and_said(tmp_path):
    """A loop that makes every step right and then cuts its text at the wrong place (a
    stop string stripped with rstrip, which takes every trailing character in it) was
    traced as "no fixed case differs", the first case shown, exit 0."""
    wrong = tmp_path / "rstripped.py"
    reference = (paths.SOLUTIONS / find("eos-stop").folder / "solution.py").read_text()
    cut = "return text[: len(text) - max(len(s) for s in ended)]"
    assert cut in reference
    # The longest stop string's characters stripped from the end, as a set: one too many
    # where the text before it ends in one of them too.
    wrong.write_text(reference.replace(cut, "return text.rstrip(max(ended, key=len))"))
    done = trace("eos-stop", "--submission", wrong)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "the first fixed case where the runs differ" in done.stdout
    assert "but it returns another text" in done.stdout


def test_a_list_of_characters_is_traced_as_no_text(tmp_path):
    """generate() returning its characters as a list fails every check of its grade; the
    trace joined the list and said no case differed."""
    wrong = tmp_path / "a_list.py"
    reference = (paths.SOLUTIONS / find("generate").folder / "solution.py").read_text()
    joined = 'return "".join(new_text)'
    assert joined in reference
    wrong.write_text(reference.replace(joined, "return new_text"))
    done = trace("generate", "--submission", wrong)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "your run returns a list, not text" in done.stdout, done.stdout


def test_a_cache_from_other_positions_differs_where_the_window_is_first_full(tmp_path):
    # Dropping the oldest cached entry keeps the right tokens but keys made at their
    # old positions: the windows and the first picks agree, the model's answers do not.
    wrong = mistake("kv-cache", "drop_oldest", tmp_path)
    prompt = corpus_prefix(CONTEXT_LENGTH - 2)
    # Steps 1 to 3 read 46, 47 and 48 tokens; step 4 is the first whose cache was cut.
    done = trace("kv-cache", prompt, "--submission", wrong, "--steps", "6")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "step 4 is the first that differs" in done.stdout
    assert table_row(done.stdout, 4).startswith(">")
    assert "but the model told your run otherwise" in done.stdout


def first_cropped(case_args: dict, names: tuple[str, ...]) -> tuple[str, int]:
    """The first fixed case whose window must slide, and the step (from 1) that first
    reads more than CONTEXT_LENGTH tokens: where keeping the oldest tokens shows."""
    for case_id, case in case_args.items():
        call = dict(zip(names, case))
        prompt, new_chars = call["context"].shape[1], call["new_chars"]
        # step s reads the prompt and the s - 1 characters made before it
        if prompt + new_chars - 1 > CONTEXT_LENGTH:
            return case_id, max(1, CONTEXT_LENGTH - prompt + 2)
    raise AssertionError("some fixed case of generate must slide the window")


def test_without_arguments_the_first_differing_case_is_shown_as_grade_counts_it(crop_first,
                                                                                  tmp_path):
    contract = load_contract(find("generate"))
    case_id, step = first_cropped(contract.case_args, contract.arg_names)
    assert case_id != next(iter(contract.case_args)), "the first case must not show it"
    number = list(contract.case_args).index(case_id) + 1

    done = trace("generate", "--submission", crop_first)
    assert done.returncode == 1, done.stdout + done.stderr
    assert (f"case [{case_id}] ({number} of {len(contract.case_args)}): the first fixed "
            "case where the runs differ") in done.stdout
    assert f"step {step} is the first that differs (it makes new character {step})" \
        in done.stdout
    assert table_row(done.stdout, step).startswith(">")

    # grade names the same case and counts the character as trace counts the step
    graded = run_grade("generate", "--submission", crop_first, tmp_path=tmp_path)
    failed = [t for t in graded.report["tests"] if t["status"] == "fail"]
    assert failed[0]["name"].endswith(f"[{case_id}]"), failed[0]["name"]
    assert failed[0]["message"].startswith(f"new character {step} differs")


def test_case_picks_a_fixed_case_and_the_prompt_replaces_its_own(crop_first):
    contract = load_contract(find("generate"))
    ids = list(contract.case_args)
    call = dict(zip(contract.arg_names, contract.case_args["crop-many-times"]))
    assert call["context"].shape[1] == 1
    done = trace("generate", "--submission", crop_first, "--case", "crop-many-times")
    assert done.returncode == 1, done.stdout + done.stderr
    assert (f"case [crop-many-times] ({ids.index('crop-many-times') + 1} of {len(ids)}), "
            "picked with --case") in done.stdout
    # One prompt token: step s reads s tokens, so step CONTEXT_LENGTH + 1 is the first
    # whose window slides.
    step = CONTEXT_LENGTH + 1
    assert f"step {step} is the first that differs" in done.stdout
    assert f"new_chars {call['new_chars']}," in done.stdout

    # With a prompt: the case's count of new characters, your prompt.
    done = trace("generate", "--reference", "--case", "one-char", "Tom")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "case [one-char]" in done.stdout and "picked with --case" in done.stdout
    assert "prompt 'Tom' (3 tokens), new_chars 1, context_length" in done.stdout
    assert "(with your prompt)" in done.stdout
    table_row(done.stdout, 1)
    assert not re.search(r"^[ >]\s*2  ", done.stdout, flags=re.M)


@pytest.mark.parametrize("order", [
    ["generate", "--steps", "3", "Tom", "--reference"],
    ["generate", "Tom", "--steps", "3", "--reference"],
    ["--reference", "--steps", "3", "generate", "Tom"],
    ["generate", "--case", "short-context", "--steps", "3", "Tom", "--reference"],
])
def test_options_may_come_before_between_or_after_the_positionals(order):
    done = trace(*order)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "prompt 'Tom' (3 tokens), new_chars 3," in done.stdout
    assert all(table_row(done.stdout, step) for step in (1, 2, 3))


def test_an_unknown_case_exits_2_with_the_ids_and_the_nearest():
    ids = list(load_contract(find("generate")).case_args)
    done = trace("generate", "--case", "crop-many-time")
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "no fixed case 'crop-many-time'" in lines[0]
    assert "did you mean crop-many-times?" in lines[0]
    assert lines[0].endswith("its cases: " + ", ".join(ids))
    assert "Traceback" not in done.stderr


def test_help_says_options_may_go_anywhere():
    done = trace("--help")
    assert done.returncode == 0
    assert "Options go after the prompt" not in done.stdout
    assert "--case ID" in done.stdout


def test_the_table_fits_80_columns_without_a_terminal(crop_first):
    done = trace_cli("generate", corpus_prefix(3 * CONTEXT_LENGTH), "--submission",
                 crop_first, "--steps", "20")
    assert done.returncode == 1, done.stderr
    table = done.stdout.split("\n\n")[1]
    assert table.splitlines()[0].startswith("step")
    assert all(len(line) <= 80 for line in table.splitlines()), table


def test_plot_writes_a_png_of_the_first_differing_step(crop_first, tmp_path):
    pytest.importorskip("matplotlib")
    picture = tmp_path / "step.png"
    done = trace("generate", corpus_prefix(CONTEXT_LENGTH), "--submission",
                 crop_first, "--steps", "4", "--plot", picture)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"drew step 2 in {picture}" in done.stdout
    data = picture.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    assert width > 100 and height > 100


def test_a_chinese_plot_without_a_cjk_font_is_in_english_and_says_so(
        crop_first, tmp_path, monkeypatch):
    """`gpt-kata --lang zh trace --plot` where no font has Chinese characters: the
    picture is labelled in English, with no warning for each character matplotlib
    cannot draw, and the report says so once, in Chinese."""
    import warnings

    from matplotlib.axes import Axes

    from grader.locale import fonts

    pytest.importorskip("matplotlib")
    monkeypatch.setenv("GPT_KATA_LANG", "zh")  # put back after, whatever --lang sets
    monkeypatch.setattr(fonts, "cjk_font", lambda: None)
    titles: list[str] = []
    original = Axes.set_title
    monkeypatch.setattr(Axes, "set_title",
                        lambda self, text, *a, **k: titles.append(text) or original(
                            self, text, *a, **k))
    picture = tmp_path / "step.png"
    out, err = io.StringIO(), io.StringIO()
    with warnings.catch_warnings(record=True) as caught, redirect_stdout(out), \
            redirect_stderr(err):
        warnings.simplefilter("always")
        code = main(["--lang", "zh", "trace", "generate", corpus_prefix(CONTEXT_LENGTH),
                     "--submission", str(crop_first), "--steps", "4", "--plot",
                     str(picture)])
    assert code == 1, out.getvalue() + err.getvalue()
    assert not [w for w in caught if "missing from font" in str(w.message)]
    assert len(titles) == 1 and titles[0].endswith(", step 2: the first step that differs")
    assert not re.search(r"[\u4e00-\u9fff]", titles[0]), titles
    assert out.getvalue().count("没有安装含中文字符的字体") == 1, out.getvalue()
    assert picture.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("args, words", [
    (["no-such-problem"], "no problem called 'no-such-problem'"),
    (["top-k"], "does not generate text"),
    (["softmax"], "does not generate text"),
    (["generate", "--seed", "3"], "takes no seed"),
    (["generate", "caf\u00e9"], "not in the model's vocabulary"),
    (["generate", "--steps", "-1"], "--steps must be between"),
    (["generate", "--submission", "does/not/exist.py"], "no such file"),
])
def test_usage_errors_exit_2_with_one_line(args, words):
    done = trace(*args)
    assert done.returncode == 2, done.stdout + done.stderr
    assert words in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr


def test_an_unfinished_starter_gives_one_line():
    done = trace("generate", "--submission", ROOT / "data" / "starters" / "06-generate" /
                 "solution.py")
    assert done.returncode == 1
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1 and "not implemented yet" in lines[0], done.stdout
    assert "Traceback" not in done.stdout + done.stderr


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the spawned path, forced")
def test_the_spawned_path_forced_on_linux_says_how_to_trace(monkeypatch) -> None:  # noqa: ANN001
    # "which it does on Linux only", said on Linux, where the variable was the reason.
    monkeypatch.setenv("GPT_KATA_SPAWN_WORKERS", "1")
    traced = trace("generate", "--reference")
    assert traced.returncode == 1, traced.stdout + traced.stderr
    assert "GPT_KATA_SPAWN_WORKERS=1 forces: unset it" in traced.stdout + traced.stderr
