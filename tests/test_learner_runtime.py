"""The learner's runtime holds no answer: what a learner runs imports and works with
the answer modules absent, as a learners' copy will hold it.

The answers are the modules tests/test_release.py's REFERENCE_CODE names (the
grader's GPT, the judges, the knobbed mistakes, the check modules) and the modern
decoder (problem 35's answer). The learner's runtime is what the statements import
(grader.reuse), what `list`, `hint` and `reset` run, and what shows a grade
(the report, its scores): none may import an answer when it loads. This is the
first floor of one runtime for the kata and its learners' copy (the copy holds
grader.reuse today; the rest is to follow).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ANSWERS = ("grader.model.gpt", "grader.model.llama", "grader.grading.subject.transformer",
           "grader.grading.subject.mistakes", "grader.grading.judging.any_result",
           "grader.grading.judging.generated_text", "grader.grading.judging.filtered_logits",
           "grader.checks")
RUNTIME = ("grader.paths", "grader.registry", "grader.reuse", "grader.locale",
           "grader.wording", "grader.cli.main", "grader.learner.status", "grader.learner.grade",
           "grader.reports.report", "grader.reports.results", "grader.reports.scoring",
           "grader.grading.values.failures")
BLOCK = ("import sys\n"
         f"for name in {ANSWERS!r}:\n"
         "    sys.modules[name] = None  # importing it now fails\n")


def run(code: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", BLOCK + code], cwd=cwd, capture_output=True,
                          text=True, encoding="utf-8", timeout=120)


def test_the_learners_runtime_imports_without_the_answers() -> None:
    done = run("import importlib\n"
               f"for name in {RUNTIME!r}:\n"
               "    importlib.import_module(name)\n"
               "print('ok')\n")
    assert done.stdout.strip() == "ok", done.stderr[-3000:]


def test_the_block_holds() -> None:
    done = run("import grader.model.gpt\n")
    assert done.returncode != 0 and "grader.model.gpt" in done.stderr


@pytest.mark.parametrize("command", [["list"], ["hint", "top-k"], ["--lang", "zh", "list"]])
def test_the_learners_commands_run_without_the_answers(command: list[str],
                                                       tmp_path: Path) -> None:
    from learner import learner_kata

    kata = learner_kata(tmp_path)
    done = run("from grader.cli.main import main\n"
               f"sys.exit(main({command!r}))\n", cwd=kata)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "crop-context" in done.stdout or "09-top-k" in done.stdout, done.stdout


# The instructor's side, which a learners' copy does not hold either.
INSTRUCTOR = ("grader.classroom", "grader.release", "grader.maintainer")
# What a learner runs in a copy: its commands (their parsers built), a grade shown, what
# a statement imports, and the kata's judges the practice grade shares (kv-cache's calls,
# a training loop's rates, sample's draws again, the models' refusals in either language),
# what a time-out was doing, and the worker protocol's values, as which the copy's cases
# are stored.
ENTRY_POINTS = ("grader.play", "grader.__main__", "grader.cli.main", "grader.learner.grade",
                "grader.learner.commands", "grader.learner.notebook",
                "grader.learner.training.command",
                "grader.learner.practice", "grader.learner.status", "grader.learner.watch",
                "grader.learner.tools.practice_talk", "grader.learner.tools.practice_trace",
                "grader.learner.training.practice_train", "grader.learner.tools.trace",
                "grader.learner.tools.trace_view", "grader.learner.tools.trace_plot",
                "grader.model.runs", "grader.reports.report", "grader.reports.junit",
                "grader.reuse", "grader.locale", "grader.grading.judging.cached_steps",
                "grader.grading.judging.generator_draws",
                "grader.grading.judging.schedule_rates", "grader.grading.judging.refusals",
                "grader.sandbox.host.slow_or_endless", "grader.sandbox.wire.encoding")


def module_of(file: str) -> str:
    name = "grader." + file.removesuffix(".py").replace("/", ".")
    return name.removesuffix(".__init__")


def test_the_copy_holds_exactly_what_its_runtime_imports() -> None:
    """grader/release/build.py's RUNTIME_FILES, the kata's modules a learners' copy holds,
    are what the copy's commands import with the answers and the instructor's side
    absent: a module they come to need is listed there, or the copy breaks."""
    from grader.release.build import RUNTIME_FILES

    blocked = ("import sys, types, torch\n"
               f"for name in {INSTRUCTOR!r}:\n"
               "    sys.modules[name] = None\n"
               # the copy's stored answers, which grader.play runs the shipped GPT from
               "shipped = types.ModuleType('gpt_kata_practice.shipped')\n"
               "shipped.shipped_gpt = lambda: torch.nn.Identity()\n"
               "sys.modules['gpt_kata_practice'] = types.ModuleType('gpt_kata_practice')\n"
               "sys.modules['gpt_kata_practice.shipped'] = shipped\n")
    done = run(blocked + "import importlib\n"
               f"for name in {ENTRY_POINTS!r}:\n"
               "    try:\n"
               "        importlib.import_module(name)\n"
               "    except SystemExit:\n"
               "        pass  # grader.__main__ runs the command line, which wants a command\n"
               "from grader.cli.main import build_parser\n"
               "build_parser()\n"
               "print(' '.join(sorted(k for k, v in sys.modules.items()\n"
               "                      if k.startswith('grader') and v is not None)))\n")
    assert done.returncode in (0, 2), done.stderr[-3000:]
    # grader.__main__ ran the command line as it loaded: a module whose import ends in
    # SystemExit is not kept in sys.modules, so it is counted as imported here.
    imported = set(done.stdout.split()) | {"grader.__main__"} | practice_imports()
    listed = {module_of(f) for f in RUNTIME_FILES} | {"grader"}
    assert imported == listed, (f"imported but not in the copy: {sorted(imported - listed)}; "
                                f"in the copy but not imported: {sorted(listed - imported)}")


def practice_imports() -> set[str]:
    """The kata's modules the copy's own package (stood in for above) imports, as
    written in grader/release/practice/: its grade shows a failure's inputs as the
    kata's does, say."""
    import ast

    from grader.release.build import PRACTICE_FILES

    found: set[str] = set()
    for name in PRACTICE_FILES:
        tree = ast.parse((ROOT / "grader" / "release" / "practice" / name).read_text("utf-8"))
        found |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                  and node.module and node.module.startswith("grader.")}
    return found


def test_every_grader_module_a_learners_file_imports_is_in_the_copy() -> None:
    """The starters and the references import the configs for their type hints: from
    grader.model.gpt and grader.model.llama, which a learners' copy does not hold, so
    an editor there marked the import unresolved and led nowhere."""
    import ast

    from grader.release.build import RUNTIME_FILES

    held = {name.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
            for name in RUNTIME_FILES}
    files = [*ROOT.glob("problems/*/solution.py"), *ROOT.glob("data/starters/*/solution.py"),
             *ROOT.glob("solutions/*/solution.py")]
    assert len(files) >= 3 * 35
    missing = sorted({f"{file.relative_to(ROOT)}: {node.module}"
                      for file in files for node in ast.walk(ast.parse(file.read_text("utf-8")))
                      if isinstance(node, ast.ImportFrom) and node.module
                      and node.module.startswith("grader.")
                      and node.module.removeprefix("grader.") not in held})
    assert missing == [], missing
