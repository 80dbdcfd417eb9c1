"""How a call names a harness of grader/sandbox/worker/harnesses.py in place of a method.

A call to the worker names what to run as one string: a Solution method's name, or
"harness:<name>" for trusted code that drives the submission's module. That string
is made by `harness_ref` and read by `harness_name` only, both checking that the name
is one of the harnesses, so a misspelt harness fails where it is named, and nothing
else splits the string.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

_PREFIX = "harness:"


def _harness(name: str) -> Callable[..., Any]:
    """The harness called `name`; ValueError for any other name."""
    from grader.sandbox.worker import harnesses

    # Only the module's own public functions: not what it imports, its helpers or
    # its exception classes.
    found = getattr(harnesses, name, None) if not name.startswith("_") else None
    if not inspect.isfunction(found) or found.__module__ != harnesses.__name__:
        raise ValueError(f"grader/sandbox/worker/harnesses.py has no harness called {name!r}")
    return found


def harness_ref(name: str) -> str:
    """What a call names as its method to run the harness `name`."""
    _harness(name)
    return _PREFIX + name


def harness_name(method: str) -> str | None:
    """The harness a call's method names, or None for a method of the submission's."""
    if not method.startswith(_PREFIX):
        return None
    name = method[len(_PREFIX):]
    _harness(name)
    return name


def run_harness(name: str, module: Any, *args: Any, **kwargs: Any) -> Any:
    """The harness `name` driving `module`, the submission's or the reference's."""
    return _harness(name)(module, *args, **kwargs)
