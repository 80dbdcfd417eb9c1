"""Drivers for answers that are not a single Solution method call.

They run inside the worker, next to the submission, and return plain data.
A check calls one with `kata.run("harness:<name>", ...)`; the first argument
each receives is the submission's module.
"""

from __future__ import annotations
