"""Loading a problem's known weights into your module, by the names its statement fixes."""

from __future__ import annotations

import torch

SHOWN_NAMES = 8  # longer lists of names are cut short


class KnownWeightsError(Exception):
    """Your module's parameters do not fit the known weights; the message lists how."""


def names(listed: list[str]) -> str:
    if len(listed) <= SHOWN_NAMES:
        return ", ".join(listed)
    return f"{', '.join(listed[:SHOWN_NAMES])} and {len(listed) - SHOWN_NAMES} more"


def load_known_weights(module: torch.nn.Module, weights: dict[str, torch.Tensor],
                       class_name: str) -> None:
    """Copy `weights` into the parameters of the same names. Buffers (a causal mask
    kept with register_buffer, say) are yours and left alone."""
    found = dict(module.named_parameters())
    missing = [k for k in weights if k not in found]
    extra = [k for k in found if k not in weights]
    if missing or extra:
        lines = [f"{class_name}'s parameters do not have the names the statement fixes, "
                 "so the grader cannot load its known weights into them:"]
        if len(weights) <= SHOWN_NAMES:
            lines += [f"  expected: {', '.join(weights)}",
                      f"  found:    {', '.join(found) or 'no parameters at all'}"]
        else:
            lines.append(f"  expected {len(weights)} parameters, found {len(found)}")
        if missing:
            lines.append(f"  missing:  {names(missing)}")
        if extra:
            lines.append(f"  not expected: {names(extra)}")
        raise KnownWeightsError("\n".join(lines))
    for name, value in weights.items():
        if tuple(found[name].shape) != tuple(value.shape):
            raise KnownWeightsError(f"{class_name}'s parameter {name} has shape "
                                    f"{tuple(found[name].shape)}, expected {tuple(value.shape)}")
    with torch.no_grad():
        for name, value in weights.items():
            found[name].copy_(value)
