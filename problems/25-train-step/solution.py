import torch
import torch.nn.functional as F  # noqa: F401 - F.cross_entropy is the loss
from torchtyping import TensorType


class Solution:
    def train_step(
        self, model: torch.nn.Module, optimizer: torch.optim.Optimizer,
        x: TensorType["B", "T", int], y: TensorType["B", "T", int],
    ) -> float:
        """One step of training on the batch (x, y); returns its loss as a float.

        model: a GPT; model(x) gives logits of shape (B, T, vocab_size).
        optimizer: an AdamW over the model's parameters; use this one, it
            carries what it learned about the gradients from step to step.
        x: input token ids, a LongTensor of shape (B, T).
        y: the target of every position, a LongTensor of shape (B, T).

        Clear the gradients, run the model on x, compute the cross-entropy of
        the flattened logits (B*T, vocab_size) against the flattened targets
        (B*T,), run backward(), step the optimizer, and return the loss of this
        forward pass as a Python float.
        """
        raise NotImplementedError("write train_step(): see README.md")
