"""What the registry and the reference say of a contract, so its module need not.

A contract's problem is the one whose check module declares it (handed to the module
as it loads: grader/grading/contracts/declaring.py), its method that
problem's only method, its argument names the reference method's parameters, and
whether it yields what the reference does (grader/grading/contracts/contract.py). The
reference is read from its source, not run: collecting a check module must not
import the learner-facing code it grades.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import cache

from grader.registry import Problem, problems


class ContractError(Exception):
    """A check module does not fit the registry, the reference or the goldens."""


@dataclass(frozen=True)
class Signature:
    """A reference method's parameters, read from its source without running it."""

    names: tuple[str, ...]
    required: int
    yields: bool


def derive(slug: str, method: str) -> tuple[str, str, Signature | None]:
    """(problem, method, the reference method's signature) as far as the registry and
    the reference say them; what they cannot say is left for `validate` to name."""
    problem = next((p for p in problems() if p.slug == slug), None)
    if problem is None:
        return slug, method, None
    if not method and len(problem.methods) == 1:
        method = problem.methods[0]
    if method not in problem.methods:
        return slug, method, None
    return slug, method, reference_signature(problem, method)


@cache
def reference_signature(problem: Problem, method: str) -> Signature:
    """The parameters a check passes. A module's method is called through
    grader/model/parts.ModuleDriver, which takes the config and the weights first."""
    tree = ast.parse(problem.reference.read_text(encoding="utf-8"))
    built = ("config", "weights") if problem.module else ()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == problem.class_name:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == method:
                    params = [*item.args.posonlyargs, *item.args.args][1:]  # without self
                    return Signature((*built, *(p.arg for p in params)),
                                     len(built) + len(params) - len(item.args.defaults),
                                     _yields(item))
    raise ContractError(f"{problem.reference} has no {problem.class_name}.{method}()")


def _yields(function: ast.FunctionDef) -> bool:
    """Whether the function itself (not a function inside it) yields."""
    todo: list[ast.AST] = list(function.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return True
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                                 ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(node))
    return False
