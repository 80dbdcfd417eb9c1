"""Every named mistake has a stable id, well formed and its own within its problem.

expected.toml files and gradebooks refer to mistakes by id (the JSON report's
`mistake.id`), so two mistakes of one problem must never share one, and an id
must read as "<problem slug>/<kebab-case words>".
"""

from __future__ import annotations

import pytest
from conftest import module_from

from grader.grading.failures import MISTAKE_ID, Mistake, kebab
from grader.registry import Problem, problems


def mistakes_of(module: object) -> list[Mistake]:
    """The module's contract's mistakes and every other it holds, alone or in a list."""
    found: list[Mistake] = list(getattr(getattr(module, "CONTRACT", None), "mistakes", ()))
    for value in vars(module).values():
        if isinstance(value, Mistake):
            found.append(value)
        elif isinstance(value, (list, tuple)):
            found.extend(v for v in value if isinstance(v, Mistake))
    unique: dict[int, Mistake] = {id(m): m for m in found}
    return list(unique.values())


@pytest.mark.parametrize("problem", problems(), ids=lambda p: p.slug)
def test_each_mistake_id_is_well_formed_and_names_one_mistake(problem: Problem) -> None:
    module = module_from(problem.checks, f"ids_{problem.checks.stem}")
    by_id: dict[str, str] = {}
    for mistake in mistakes_of(module):
        named = mistake.named(problem.slug)
        assert MISTAKE_ID.fullmatch(named.id), f"{named.id!r} is not <slug>/<kebab-case>"
        assert named.id.startswith(f"{problem.slug}/")
        other = by_id.setdefault(named.id, mistake.name)
        assert other == mistake.name, f"{named.id} names both {other!r} and {mistake.name!r}"


def test_an_id_is_the_name_in_kebab_case_unless_given() -> None:
    assert kebab("return a list (not a str)") == "return-a-list-not-a-str"
    derived = Mistake("Do not crop the context", "crop it", print)
    assert derived.named("generate").id == "generate/do-not-crop-the-context"
    kept = Mistake("forget to crop the context", "crop it", print, id="do-not-crop-the-context")
    assert kept.named("generate").id == "generate/do-not-crop-the-context"

