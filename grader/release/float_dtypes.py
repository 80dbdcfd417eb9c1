"""Which float tensors of an answer the instructor's judge takes in another float dtype.

Most judges take a float64 answer where the reference gives float32 (the values are
what is graded); some insist on the input's dtype (softmax, the filters, AdamW's
state). The copy has no judges of its own, so the release asks each contract's
judge, tensor by tensor: the reference's answer with that one tensor cast, passed or
failed. The copy then casts what the learner returns at the paths that passed
(practice/judge.py, in_stored_dtypes) before it compares.
"""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import torch

Path = tuple[Any, ...]  # indices and keys into an answer


def float_tensors(answer: Any, path: Path = ()) -> Iterator[Path]:
    """The path of every float tensor in `answer`, through lists, tuples and dicts."""
    if isinstance(answer, torch.Tensor):
        if answer.is_floating_point():
            yield path
    elif isinstance(answer, (list, tuple)):
        for i, item in enumerate(answer):
            yield from float_tensors(item, (*path, i))
    elif isinstance(answer, dict):
        for key, item in answer.items():
            if isinstance(key, str):  # a path is stored in JSON
                yield from float_tensors(item, (*path, key))


def cast_at(answer: Any, path: Path) -> Any:
    """`answer` with the float tensor at `path` in the other of float32 and float64."""
    if not path:
        return answer.to(torch.float32 if answer.dtype == torch.float64 else torch.float64)
    key, rest = path[0], path[1:]
    if isinstance(answer, dict):
        return {**answer, key: cast_at(answer[key], rest)}
    items = list(answer)
    items[key] = cast_at(items[key], rest)
    return type(answer)(items)


def any_float_dtype(contract: Any, reference: Any, args: tuple, answer: Any) -> list[list[Any]]:
    """The paths in `answer` (the reference's to `args`) where `contract`'s judge takes
    the tensor in another float dtype. A judge that needs what only a grade holds (the
    worker's record of the call) fails the cast answer in its own way: the copy then
    insists on the dtype, the stricter of the two."""
    from grader.grading.subject.kata import Call

    named = contract.bind(SimpleNamespace(reference=reference), args)
    taken = []
    for path in float_tensors(answer):
        cast = cast_at(answer, path)
        call = Call(contract.method, args, named, ("value", cast), None)  # type: ignore[arg-type]
        try:
            contract.judge(cast, answer, call)
        except Exception:  # noqa: BLE001 - GradeFailure, or a judge that needs a grade
            continue
        taken.append(list(path))
    return taken
