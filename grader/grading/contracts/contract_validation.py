"""A check module's contract checked against the registry, the reference and the
goldens when the grader collects the module, so a slug, method or argument name
that does not fit stops grading with a clear error instead of grading the wrong
thing."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

from grader import paths
from grader.grading.contracts.contract import Contract
from grader.grading.contracts.contract_derivation import (
    ContractError,
    Signature,
    reference_signature,
)
from grader.grading.values.failures import Mistake
from grader.model import artifacts
from grader.registry import problems


def shown_path(path: Path) -> str:
    """A check module's path as a contributor finds it in the kata: a problem's own
    checks by where the registry keeps them (in the problem's grading folder)."""
    registered = {p.checks.name: p.checks for p in problems()}.get(path.name)
    if registered is None:
        return f"grader/checks/{path.name}"
    return registered.relative_to(paths.PACKAGE.parent).as_posix()


def validate(module: ModuleType) -> Contract:
    """The module's contract, or a ContractError that names the module and what is wrong.

    Every other Contract the module holds (a problem of several methods has one
    each) is validated too; only CONTRACT's cases have goldens.
    """
    path = Path(module.__file__ or module.__name__)
    contract = getattr(module, "CONTRACT", None)

    def wrong(what: str) -> ContractError:
        return ContractError(f"{shown_path(path)}: {what}")

    if not isinstance(contract, Contract):
        raise wrong("declares no CONTRACT = Contract(...) "
                    "(see grader/grading/contracts/contract.py)")
    for name, other in vars(module).items():
        if isinstance(other, Contract) and other is not contract:
            validate_contract(other, path, lambda what, n=name: wrong(f"{n}: {what}"),
                              goldens=False)
            if other.problem != contract.problem:
                raise wrong(f"{name} grades problem {other.problem!r}, CONTRACT "
                            f"{contract.problem!r}")
    validate_contract(contract, path, wrong)
    graded = {c.method for c in vars(module).values() if isinstance(c, Contract)}
    problem = next(p for p in problems() if p.slug == contract.problem)
    ungraded = [m for m in problem.methods if m not in graded]
    if ungraded:
        raise wrong(f"no contract grades {', '.join(ungraded)}, which problems/registry.toml "
                    f"lists for {problem.slug}")
    for name, value in vars(module).items():
        if name.startswith("test_") and callable(value) and not (value.__doc__ or "").strip():
            raise wrong(f"{name} has no docstring; its first line names the test in reports")
    return contract


def validate_contract(contract: Contract, path: Path, wrong: Callable[[str], ContractError],
                      goldens: bool = True) -> None:
    by_slug = {p.slug: p for p in problems()}
    if not contract.problem:
        raise wrong("names no problem: declare Contract(problem=...), or declare it in "
                    "its problem's check module, grader/checks/<slug>/check_<slug>.py (a "
                    "- in the slug becomes _), imported as a module")
    problem = by_slug.get(contract.problem)
    if problem is None:
        raise wrong(f"problem {contract.problem!r} is not in problems/registry.toml; "
                    f"the problems are: {', '.join(by_slug)}")
    if problem.checks.name != path.name:
        raise wrong(f"declares problem {problem.slug!r}, whose checks are in "
                    f"{problem.checks.name}")
    if not contract.method:
        raise wrong(f"names no method, and {problem.slug} has several in "
                    f"problems/registry.toml: declare one of {', '.join(problem.methods)}")
    if contract.method in problem.methods:
        signature = reference_signature(problem, contract.method)
        if tuple(contract.arg_names) != signature.names:
            raise wrong(f"arg_names {tuple(contract.arg_names)} are not the parameters of the "
                        f"reference's {contract.method}(): {signature.names}")
        if contract.iterate != signature.yields:
            raise wrong(f"iterate={contract.iterate}, but the reference's {contract.method}() "
                        f"{'yields' if signature.yields else 'returns'} its answer")
    elif contract.harness and contract.arg_names:
        # Driven by a harness, it grades what is no method (a class the harness
        # builds): the harness's arguments are the ones it declares.
        names = tuple(contract.arg_names)
        signature = Signature(names, len(names), bool(contract.iterate))
    else:
        raise wrong(f"method {contract.method!r} is not one of {problem.slug}'s methods in "
                    f"problems/registry.toml: {', '.join(problem.methods)}")
    for mistake in contract.mistakes:
        if not (isinstance(mistake, Mistake) and mistake.name and mistake.hint
                and mistake.runs and all(callable(run) for run in mistake.runs)):
            raise wrong(f"{mistake!r} is not a Mistake with a name, a hint and a way to make it")
    if not goldens and contract.goldens:
        raise wrong("has goldens=True, but only CONTRACT's cases have goldens: declare "
                    "goldens=False")
    validate_cases(contract, signature, wrong, goldens)


def validate_cases(contract: Contract, signature: Signature,
                   wrong: Callable[[str], ContractError], goldens_kept: bool = True) -> None:
    cases = contract.case_args
    for case_id, args in cases.items():
        if not isinstance(args, tuple):
            raise wrong(f"case {case_id!r} is a {type(args).__name__}, not a tuple of arguments")
        if not signature.required <= len(args) <= len(signature.names):
            raise wrong(f"case {case_id!r} has {len(args)} arguments; {contract.method}() "
                        f"takes {signature.required} to {len(signature.names)}")
    if not goldens_kept:
        return  # the goldens file is keyed by problem: it holds CONTRACT's
    goldens = set(artifacts.load_goldens().get(contract.problem, {}))
    if not contract.goldens:
        if goldens:
            raise wrong("declares goldens=False, but data/goldens.json has goldens for "
                        f"{contract.problem}: remove them")
        return
    if goldens != set(cases):
        missing, extra = sorted(set(cases) - goldens), sorted(goldens - set(cases))
        # A new problem's goldens are recorded on any machine; changed cases' only on the
        # platform the others were recorded on, where make_data does not refuse them.
        run = ("`python -m grader.maintainer.make_data starters new-goldens`" if not goldens
               else "`python -m grader.maintainer.make_data goldens manifest` on the "
                    "platform data/manifest.json names")
        raise wrong(f"the cases and data/goldens.json disagree (cases without a golden: "
                    f"{missing}; goldens without a case: {extra}); run {run}")


class CheckModule(pytest.Module):
    """A check module, validated against its contract before its tests are collected."""

    def collect(self) -> list[pytest.Item | pytest.Collector]:
        try:
            validate(self.obj)
        except ContractError as error:
            raise self.CollectError(str(error)) from None
        return list(super().collect())
