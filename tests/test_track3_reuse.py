"""Statements 22 and 23 offer `solution_of(..., name=...)` for the classes a learner
wrote before, and the lines they give pass in the sandbox as written.
"""

from __future__ import annotations

import re
import shutil
import textwrap
from pathlib import Path

import pytest
from conftest import grade_in_folder, messages

from grader.registry import find
from grader.sandbox.worker import machine

needs_landlock = pytest.mark.skipif(machine.probe().landlock_abi < 1,
                                    reason="no Landlock on this kernel")

CODE = re.compile(r"( *)```python\n(\1from grader\.reuse import solution_of\n.*?)\1```",
                  re.DOTALL)


def offered(slug: str) -> str:
    """The solution_of lines the statement of `slug` gives."""
    [(_, lines)] = CODE.findall(find(slug).statement.read_text(encoding="utf-8"))
    return textwrap.dedent(lines)


def test_the_statements_offer_solution_of_with_the_class_name() -> None:
    assert 'solution_of("multi-head-attention", name="CausalSelfAttention")' in offered(
        "transformer-block")
    assert 'Block = solution_of("transformer-block", name="Block")' in offered("gpt")


def without_classes(source: str, *names: str) -> str:
    """`source` with the top-level classes `names` taken out."""
    for name in names:
        source = re.sub(rf"\nclass {name}\(nn\.Module\):\n(?:(?:    .*)?\n)+", "\n", source)
    return source


@needs_landlock
def test_a_block_and_a_gpt_built_on_the_earlier_classes_pass(tmp_path: Path) -> None:
    problems = tmp_path / "learner" / "problems"
    attention = find("multi-head-attention")
    (problems / attention.folder).mkdir(parents=True)
    shutil.copy(attention.reference, problems / attention.folder / "solution.py")
    for slug, replaced in (("transformer-block", ("CausalSelfAttention",)),
                           ("gpt", ("CausalSelfAttention", "MLP", "Block"))):
        problem = find(slug)
        reference = problem.reference.read_text(encoding="utf-8")
        source = without_classes(reference, *replaced)
        assert all(f"class {name}(" not in source for name in replaced)
        (problems / problem.folder).mkdir()
        imports = "from torchtyping import TensorType\n"
        source = source.replace(imports, imports + "\n" + offered(slug), 1)
        assert "solution_of(" in source
        (problems / problem.folder / "solution.py").write_text(source)
    for slug in ("transformer-block", "gpt"):
        report = grade_in_folder(problems, slug, tmp_path)
        assert report["status"] == "pass", messages(report)
