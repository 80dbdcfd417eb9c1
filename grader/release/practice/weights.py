"""Loading a problem's known weights into your module, by the names its statement fixes.

The same code as the instructor's grader's (grader/model/parts.py), so that a
module whose parameters do not fit is told the same; a test keeps the two alike.
"""

from __future__ import annotations

import torch

# How many parameter names a message lists before it says "and N more".
SHOWN_NAMES = 12


class KnownWeightsError(Exception):
    """The known weights cannot be loaded into the learner's module: a wrong shape."""


class ParameterNamesError(KnownWeightsError):
    """The learner's class is not a module with the parameters its statement fixes:
    no check can run, whatever its config."""


def load_known_weights(module: torch.nn.Module, weights: dict[str, torch.Tensor],
                       class_name: str) -> None:
    """Copy `weights` into the module's parameters of the same names.

    The names must be exactly the parameters' names: a missing, extra or
    misnamed parameter, or a wrong shape, is a KnownWeightsError that lists
    what was expected and what was found (a ParameterNamesError for names,
    a KnownWeightsError for shapes). Buffers (a causal mask kept with
    register_buffer, say) are the learner's own and left alone.
    """
    found = dict(module.named_parameters())
    missing = [k for k in weights if k not in found]
    extra = [k for k in found if k not in weights]
    if missing or extra:
        lines = [f"{class_name}'s parameters do not have the names the statement fixes, "
                 "so the grader cannot load its known weights into them:"]
        if len(weights) <= SHOWN_NAMES:  # a short list reads best whole
            lines += [f"  expected: {', '.join(weights)}",
                      f"  found:    {', '.join(found) or 'no parameters at all'}"]
        else:
            lines.append(f"  expected {len(weights)} parameters, found {len(found)}")
        if missing:
            lines.append(f"  missing:  {names(missing)}")
        if extra:
            lines.append(f"  not expected: {names(extra)}")
        lines += _tied(module, missing) + _unregistered(module, missing, found)
        raise ParameterNamesError("\n".join(lines))
    for name, value in weights.items():
        if tuple(found[name].shape) != tuple(value.shape):
            raise KnownWeightsError(
                f"{class_name}'s parameter {name} has shape {tuple(found[name].shape)}, "
                f"expected {tuple(value.shape)}")
    with torch.no_grad():
        for name, value in weights.items():
            found[name].copy_(value)


def _tied(module: torch.nn.Module, missing: list[str]) -> list[str]:
    """Why a missing name may be there after all: one tensor under two names.

    named_parameters() lists a shared tensor once, under its first name, so tying
    the head to the token embedding (as GPT-2 does) hides `head.weight`, and a
    list of one block repeated, `[Block(config)] * n`, hides every block but the
    first: that is said once for the block, not once for each of its tensors.
    """
    first_module: dict[int, str] = {}
    copies: dict[str, list[str]] = {}  # a module's first name -> its other names
    for name, sub in module.named_modules(remove_duplicate=False):
        if not name or any(name.startswith(f"{c}.") for cs in copies.values() for c in cs):
            continue
        original = first_module.setdefault(id(sub), name)
        if original != name:
            copies.setdefault(original, []).append(name)
    said = []
    for original, again in copies.items():
        if any(m.startswith(f"{c}.") for c in again for m in missing):
            kind = type(module.get_submodule(original)).__name__
            listed = (", ".join(again[:-1]) + " and " if len(again) > 1 else "") + again[-1]
            said.append(f"  {listed} {'is' if len(again) == 1 else 'are'} the same "
                        f"{kind} as {original} (a list such as [{kind}(config)] * n holds "
                        f"one module n times): build each anew, as in "
                        f"nn.ModuleList({kind}(config) for _ in range(n))")
    hidden = [c for cs in copies.values() for c in cs]
    first: dict[int, str] = {}
    for name, tensor in module.named_parameters(remove_duplicate=False):
        first.setdefault(id(tensor), name)
        if (name in missing and first[id(tensor)] != name
                and not any(name.startswith(f"{c}.") for c in hidden)):
            said.append(f"  {name} is the same tensor as {first[id(tensor)]} (tied weights); "
                        "the shipped model keeps them apart: give each its own")
    return said


def _unregistered(module: torch.nn.Module, missing: list[str],
                  found: dict[str, torch.Tensor]) -> list[str]:
    """Why the parameters of a part are missing: modules kept in a plain Python list
    or tuple are not registered, so the module never sees their parameters."""
    said = []
    for part in dict.fromkeys(name.split(".")[0] for name in missing):
        held = getattr(module, part, None)
        if (isinstance(held, (list, tuple)) and not any(n.startswith(f"{part}.") for n in found)
                and any(isinstance(m, torch.nn.Module) for m in held)):
            said.append(f"  self.{part} is a Python {type(held).__name__}, so the modules in "
                        f"it are not registered and their parameters are not "
                        f"{type(module).__name__}'s: use nn.ModuleList(...)")
    return said


def names(listed: list[str]) -> str:
    """Parameter names for a message: all of a few, the first of many."""
    if len(listed) <= SHOWN_NAMES:
        return ", ".join(listed)
    return f"{', '.join(listed[:SHOWN_NAMES])} and {len(listed) - SHOWN_NAMES} more"
