"""A problem's known mistakes, read from its TOML file.

A mistake's words (its name, its fix, its stable id) are prose for the learner,
so they live beside the check module, in grader/checks/<slug>/mistakes.toml,
one `[[mistake]]` table each, in the order they are looked for; the check
module keeps only the code that makes them. A table says how its mistake is made:

    [[mistake]]
    name = "add eps under the square root"
    fix = "eps joins after it: ..."
    id = "..."                      # optional: where the name changed and the id must not
    knobs = [{eps_inside = true}]   # each a run: partial(computation, **knobs)
    of = "other_function"           # optional: knob this function instead of the default
    runs = ["by_hand"]              # runs that are whole functions of the check module

A table with neither knobs nor runs is made by the check module's function named
after the mistake's id, in snake case: "add eps under the square root" by
add_eps_under_the_square_root. Its name then says what it is once, for the
learner, the report's id and the code alike.

TOML has no null, so a knob set to None is listed by name in the run's `none`
(`{none = ["mask"]}`); arrays are passed as tuples. A table may instead include
mistakes several problems share, from grader/checks/shared_mistakes/<name>.toml:
`include = "window"`, with optional `with` knobs added to each of their runs,
`of`, and, for a file of one mistake, its own `name` and `id`.

Everything is checked as the module is imported, so that a typo fails loudly
there and not as a diagnosis that is silently never made.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from grader import paths
from grader.grading.values.failures import Mistake, kebab, without_asides

MISTAKES_FILE = "mistakes.toml"
SHARED = paths.CHECKS / "shared_mistakes"

MISTAKE_KEYS = {"name", "fix", "id", "knobs", "of", "runs"}
INCLUDE_KEYS = {"include", "with", "of", "name", "id"}
NONE = "none"  # the knobs a run sets to None

# (file, table) pairs read so far: the consistency test checks that every table of
# every file is read by its check module.
READ: set[tuple[Path, str]] = set()


class MistakesDataError(ValueError):
    """A mistakes file that does not say what its check module can make."""


def mistakes_of(namespace: ModuleType | Mapping[str, Any],
                computation: Callable[..., Any] | None = None, *,
                table: str = "mistake") -> list[Mistake]:
    """The mistakes of the check module `namespace` (its globals(), or the module),
    in file order. Knobs are knobs of `computation` unless a table names another
    function with `of`; `table` is the name of the file's array of tables."""
    names = vars(namespace) if isinstance(namespace, ModuleType) else namespace
    # A problem's mistakes sit beside its check module, in its grading folder.
    path = Path(names["__file__"]).resolve().parent / MISTAKES_FILE
    return _read(path, table, names, computation)


def shared(name: str, computation: Callable[..., Any], **base: Any) -> list[Mistake]:
    """The mistakes of grader/checks/shared_mistakes/<name>.toml, made by knobbing
    `computation`, with the `base` knobs added to each run: for Python that builds a
    table of mistakes of its own."""
    return _read(SHARED / f"{name}.toml", "mistake", {}, computation, base)


def _read(path: Path, table: str, names: Mapping[str, Any],
          computation: Callable[..., Any] | None,
          base: Mapping[str, Any] | None = None) -> list[Mistake]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise MistakesDataError(f"{path}: no such mistakes file") from None
    except tomllib.TOMLDecodeError as error:
        raise MistakesDataError(f"{path}: {error}") from None
    entries = data.get(table)
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise MistakesDataError(f"{path}: no [[{table}]] tables")
    READ.add((path, table))
    mistakes: list[Mistake] = []
    for index, entry in enumerate(entries, 1):
        where = f"{path}: [[{table}]] number {index}"
        if "name" in entry and isinstance(entry["name"], str):
            where += f" ({entry['name']!r})"
        if "include" in entry:
            mistakes.extend(_included(entry, where, names, computation, base))
        else:
            mistakes.append(_mistake(entry, where, names, computation, base))
    return mistakes


def _mistake(entry: dict[str, Any], where: str, names: Mapping[str, Any],
             computation: Callable[..., Any] | None,
             base: Mapping[str, Any] | None) -> Mistake:
    _keys(entry, MISTAKE_KEYS, {"name", "fix"}, where)
    if base is not None and "runs" in entry:
        raise MistakesDataError(f"{where}: a shared mistake is made with knobs only")
    name, fix, key = entry["name"], entry["fix"], entry.get("id")
    for field, value in (("name", name), ("fix", fix), ("id", key)):
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise MistakesDataError(f"{where}: {field} must be a non-empty string")
    made = _function(entry["of"], where, names) if "of" in entry else computation
    knobs = entry.get("knobs", [])
    if not isinstance(knobs, list) or not all(isinstance(k, dict) for k in knobs):
        raise MistakesDataError(f"{where}: knobs must be a list of tables")
    if knobs and made is None:
        raise MistakesDataError(f"{where}: knobs, but no function to knob (give `of`)")
    runs: list[Callable[..., Any]] = []
    for table in knobs:
        changed = {**(base or {}), **_knobs(table, where)}
        _check_knobs(made, changed, where)
        runs.append(partial(made, **changed))
    listed = entry.get("runs", [])
    if not isinstance(listed, list) or not all(isinstance(r, str) for r in listed):
        raise MistakesDataError(f"{where}: runs must be a list of function names")
    runs += [_function(run, where, names) for run in listed]
    if not runs:
        # Made by the check module's function named as the mistake is identified.
        run = run_named_after(name, key)
        if run not in names:
            raise MistakesDataError(f"{where}: no knobs and no runs, and the check module "
                                    f"has no {run!r}, the function named after the "
                                    "mistake's id, to make it")
        runs = [_function(run, where, names)]
    return Mistake(name, fix, *runs, id=key)


def run_named_after(name: str, key: str | None) -> str:
    """The function that makes a mistake given no knobs and no runs: its id, in snake
    case ("feed-the-last-token" is made by feed_the_last_token)."""
    return (key or kebab(without_asides(name))).replace("-", "_")


def _included(entry: dict[str, Any], where: str, names: Mapping[str, Any],
              computation: Callable[..., Any] | None,
              base: Mapping[str, Any] | None) -> list[Mistake]:
    _keys(entry, INCLUDE_KEYS, {"include"}, where)
    if base is not None:
        raise MistakesDataError(f"{where}: a shared file cannot include another")
    if "of" not in entry and computation is None:
        raise MistakesDataError(f"{where}: no function to knob (give `of`)")
    made = _function(entry["of"], where, names) if "of" in entry else computation
    extra = entry.get("with", {})
    if not isinstance(extra, dict):
        raise MistakesDataError(f"{where}: `with` must be a table of knobs")
    path = SHARED / f"{entry['include']}.toml"
    if not path.is_file():
        raise MistakesDataError(f"{where}: no such mistakes file {path}")
    included = _read(path, "mistake", names, made, _knobs(extra, where))  # type: ignore[arg-type]
    if "name" in entry or "id" in entry:
        if len(included) != 1:
            raise MistakesDataError(f"{where}: only a shared file of one mistake can be "
                                    "renamed")
        (shared,) = included
        included = [Mistake(entry.get("name", shared.name), shared.hint, *shared.runs,
                            id=entry.get("id"))]
    return included


def _keys(entry: dict[str, Any], allowed: set[str], required: set[str], where: str) -> None:
    unknown, missing = set(entry) - allowed, required - set(entry)
    if unknown:
        raise MistakesDataError(f"{where}: unknown keys {sorted(unknown)} "
                                f"(a table may have {sorted(allowed)})")
    if missing:
        raise MistakesDataError(f"{where}: missing {sorted(missing)}")


def _knobs(table: dict[str, Any], where: str) -> dict[str, Any]:
    knobs = {name: tuple(value) if isinstance(value, list) else value
             for name, value in table.items() if name != NONE}
    nones = table.get(NONE, [])
    if not isinstance(nones, list) or not all(isinstance(n, str) for n in nones):
        raise MistakesDataError(f"{where}: `{NONE}` must list the knobs set to None")
    return {**knobs, **dict.fromkeys(nones)}


def _check_knobs(made: Callable[..., Any], knobs: Mapping[str, Any], where: str) -> None:
    """Fail on a knob that `made` does not have (a typo would else fail only when the
    mistake is run, and be taken for the learner's code not matching it)."""
    try:
        parameters = inspect.signature(made).parameters
    except (TypeError, ValueError):
        return  # a builtin without a signature: nothing to check against
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return
    unknown = set(knobs) - set(parameters)
    if unknown:
        name = getattr(made, "__qualname__", repr(made))
        raise MistakesDataError(f"{where}: {name} has no knob {sorted(unknown)}")


def _function(dotted: Any, where: str, names: Mapping[str, Any]) -> Callable[..., Any]:
    """The check module's callable named `dotted` ("looping", "transformer.gpt")."""
    if not isinstance(dotted, str):
        raise MistakesDataError(f"{where}: {dotted!r} is not a function's name")
    first, *rest = dotted.split(".")
    if first not in names:
        raise MistakesDataError(f"{where}: the check module has no {first!r}")
    found = names[first]
    for part in rest:
        if not hasattr(found, part):
            raise MistakesDataError(f"{where}: {first!r} has no {part!r}")
        found = getattr(found, part)
    if not callable(found):
        raise MistakesDataError(f"{where}: {dotted!r} is not callable")
    return found
