"""Modules whose parameters misfit known weights, each in one way the loader's message
explains (grader/model/parts.py, and the copy's weights.py written from it)."""

from __future__ import annotations

import torch
from torch import nn


class TwoLayers(nn.Module):
    """Two layers built with nn.Linear's default bias=True, one of them misnamed."""

    def __init__(self, misnamed: bool = False) -> None:
        super().__init__()
        self.up = nn.Linear(2, 3)
        setattr(self, "down2" if misnamed else "down", nn.Linear(3, 2))


class NoBiases(nn.Module):
    """Layers built with bias=False, as the well-known lecture's head builds them."""

    def __init__(self, misnamed: bool = False) -> None:
        super().__init__()
        self.up = nn.Linear(2, 3, bias=False)
        setattr(self, "down2" if misnamed else "down", nn.Linear(3, 2, bias=False))


class Tied(nn.Module):
    """The head tied to the token embedding, as GPT-2 ties them."""

    def __init__(self) -> None:
        super().__init__()
        self.wte = nn.Embedding(5, 3)
        self.head = nn.Linear(3, 5, bias=False)
        self.head.weight = self.wte.weight


class Listed(nn.Module):
    """Blocks kept in a plain Python list, or one block three times."""

    def __init__(self, repeated: bool = False) -> None:
        super().__init__()
        block = nn.Linear(2, 2)
        self.blocks = (nn.ModuleList([block] * 3) if repeated
                       else [nn.Linear(2, 2), nn.Linear(2, 2)])


def misfits() -> dict[str, tuple[nn.Module, dict[str, torch.Tensor]]]:
    """Each misfit by name: (the module, the weights it is given)."""
    blocks = {f"blocks.{i}.{p}": torch.zeros((2, 2) if p == "weight" else (2,))
              for i in range(3) for p in ("weight", "bias")}
    biased = {"up.weight": torch.zeros(3, 2), "up.bias": torch.zeros(3),
              "down.weight": torch.zeros(2, 3), "down.bias": torch.zeros(2)}
    plain = {"up.weight": torch.zeros(3, 2), "down.weight": torch.zeros(2, 3)}
    return {
        "misnamed": (TwoLayers(misnamed=True), {**plain, "up.bias": torch.zeros(3)}),
        "biases-left-on": (TwoLayers(), plain),
        "a-bias-left-on": (TwoLayers(misnamed=True), plain),
        "biases-left-off": (NoBiases(), biased),
        "a-bias-left-off": (NoBiases(misnamed=True), biased),
        "many-names": (nn.Linear(2, 3), {f"w{i}": torch.zeros(1) for i in range(30)}),
        "no-parameters": (nn.ReLU(), {"w": torch.zeros(1)}),
        "tied": (Tied(), {"wte.weight": torch.zeros(5, 3), "head.weight": torch.zeros(5, 3)}),
        "a-python-list": (Listed(), {k: v for k, v in blocks.items() if "2" not in k}),
        "one-block-thrice": (Listed(repeated=True), blocks),
        "a-wrong-shape": (nn.Linear(2, 3), {"weight": torch.ones(2, 2), "bias": torch.ones(3)}),
    }
