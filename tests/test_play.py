"""Every statement's examples can be reproduced with `grader.play`, as the statement says.

Each statement shows two setup lines and then a Python session (`>>>` lines
with the values the reader should see). Here the session of every statement
runs with the reference solution as `Solution`, and doctest compares what it
prints with what the statement shows.
"""

from __future__ import annotations

import doctest
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from grader.registry import Problem, problems
from tests.conftest import ROOT, reference_module

FENCE = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
SETUP = 'from grader.play import *\nglobals().update(examples("{slug}"))'


def python_blocks(problem: Problem) -> list[str]:
    return FENCE.findall(problem.statement.read_text(encoding="utf-8"))


def reference_class(problem: Problem) -> type:
    """The reference's class the statement's examples use: its Solution, or the
    module a module problem asks for (Head, Block, ...)."""
    return getattr(reference_module(problem.folder), problem.class_name)


@pytest.mark.parametrize("problem", problems(), ids=lambda p: p.folder)
def test_the_statement_says_how_to_run_its_examples(problem: Problem) -> None:
    setups = [b for b in python_blocks(problem) if b.startswith("from grader.play import")]
    assert len(setups) == 1, f"{problem.statement} shows no (or more than one) setup block"
    assert setups[0].startswith(SETUP.format(slug=problem.slug))


@pytest.mark.parametrize("problem", problems(), ids=lambda p: p.folder)
def test_the_statements_session_gives_the_values_it_shows(problem: Problem) -> None:
    from grader.play import examples

    session = "\n".join(b for b in python_blocks(problem) if b.lstrip().startswith(">>>"))
    names = examples(problem.slug, solution=reference_class(problem))
    test = doctest.DocTestParser().get_doctest(session, names, problem.folder,
                                               str(problem.statement), 0)
    report: list[str] = []
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    result = runner.run(test, out=report.append)
    assert result.attempted > 0, f"{problem.statement} has no >>> example to reproduce"
    assert result.failed == 0, "".join(report)


# Three sessions a learner could type, run as one `python -c` in one learner's kata
# folder (each would start torch again, which costs more than all they do): the
# first, before anything else, says what `grader.play` loaded; the others each print
# where their class came from, then what they computed.
SESSIONS = {
    "light": ("import sys, grader.play\n"
              "print(sorted(m for m in sys.modules if m.split('.')[0] in "
              "('pytest', 'hypothesis') or m in ('grader.sandbox.host.process', "
              "'grader.sandbox.worker.isolation', 'grader.sandbox.worker.serve', "
              "'grader.sandbox.host.forkserver')))\n"),
    "09-top-k": ('from grader.play import *\nglobals().update(examples("top-k"))\n'
                 "import inspect\nprint(inspect.getsourcefile(Solution))\n"
                 "print(Solution().top_k_filter(logits, 1).isfinite().sum().item(), "
                 "decode(encode('Lily')))\n"),
    "20-attention-head": ('from grader.play import *\nnames = examples("attention-head")\n'
                          "globals().update(names)\n"
                          "import inspect\nprint(inspect.getsourcefile(Head))\n"
                          "print('Solution' in names, "
                          "load_weights(Head(config), weights)(x).shape)\n"),
}


Played = tuple[Path, dict[str, list[str]]]


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Played:
    """The kata folder, whose problems of SESSIONS each hold a copy of the reference
    marked as the learner's, and what each session printed there."""
    kata = tmp_path_factory.mktemp("play") / "kata"
    for problem in SESSIONS:
        if problem != "light":
            folder = kata / "problems" / problem
            folder.mkdir(parents=True)
            mine = "# mine\n" + (ROOT / "solutions" / problem / "solution.py").read_text()
            (folder / "solution.py").write_text(mine)
    script = "".join(f"print('=== {name}')\n{code}" for name, code in SESSIONS.items())
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=kata, env=env)
    assert done.returncode == 0, done.stderr
    printed = {}
    for part in done.stdout.split("=== ")[1:]:
        name, *lines = part.splitlines()
        printed[name] = lines
    assert list(printed) == list(SESSIONS), done.stdout
    return kata, printed


def play_in_a_kata(played: Played, problem: str) -> list[str]:
    """What the session of `problem` printed after its first line, which must be where
    the class came from: the learner's file."""
    kata, printed = played
    lines = printed[problem]
    assert Path(lines[0]).resolve() == (kata / "problems" / problem / "solution.py").resolve()
    return lines[1:]


def test_play_loads_neither_pytest_nor_the_sandbox(played: Played) -> None:
    assert played[1]["light"] == ["[]"]


def test_examples_give_the_learners_own_solution(played: Played) -> None:
    assert play_in_a_kata(played, "09-top-k") == ["1 Lily"]


def test_a_module_problem_gives_the_learners_class_under_its_own_name(played: Played) -> None:
    # "The cat" is 7 characters; a head of the shipped model is 64 // 4 = 16 wide.
    assert play_in_a_kata(played, "20-attention-head") == ["False torch.Size([1, 7, 16])"]


def test_load_weights_says_which_names_it_expected() -> None:
    from grader.model.parts import ParameterNamesError
    from grader.play import load_weights, shipped_weights

    class Misnamed(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.q = torch.nn.Linear(64, 16)
            self.key = torch.nn.Linear(64, 16)
            self.value = torch.nn.Linear(64, 16)

    with pytest.raises(ParameterNamesError) as caught:
        load_weights(Misnamed(), shipped_weights("blocks.0.attn", head=0))
    text = str(caught.value)
    assert "missing:  query.weight, query.bias" in text
    assert "not expected: q.weight, q.bias" in text


def test_shipped_weights_are_the_shipped_models_own() -> None:
    from grader.play import model, shipped_weights

    second = shipped_weights("blocks.1")
    assert second.keys() == model.blocks[1].state_dict().keys()
    assert all(torch.equal(second[k], v) for k, v in model.blocks[1].state_dict().items())
    # Head 2's queries: rows 32 to 47 of the stacked queries, keys and values.
    head = shipped_weights("blocks.1.attn", head=2)
    assert torch.equal(head["query.weight"], model.blocks[1].attn.qkv.weight[32:48])
    assert torch.equal(head["value.bias"], model.blocks[1].attn.qkv.bias[128 + 32:128 + 48])


@pytest.mark.parametrize(("part", "head", "said"), [
    ("blocks.7", None, "no part 'blocks.7'"),
    ("blocks.0.mlp", 0, "needs an attention layer"),
    ("blocks.0.attn", 4, "a head from 0 to 3"),
])
def test_shipped_weights_refuse_what_the_model_does_not_have(part: str, head: int | None,
                                                             said: str) -> None:
    from grader.play import shipped_weights

    with pytest.raises(ValueError, match=said):
        shipped_weights(part, head)
