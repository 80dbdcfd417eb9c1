import torch
import torch.nn.functional as F
from torchtyping import TensorType


class Solution:
    def train_step(
        self, model: torch.nn.Module, optimizer: torch.optim.Optimizer,
        x: TensorType["B", "T", int], y: TensorType["B", "T", int],
    ) -> float:
        # The gradients of the last step are still in .grad: backward() adds to
        # them, so they are cleared first.
        optimizer.zero_grad(set_to_none=True)
        logits = model(x)
        # One prediction per row: (B*T, vocab_size) against (B*T,) targets.
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
        loss.backward()
        optimizer.step()
        # A number, not the tensor: the tensor holds the step's whole graph.
        return loss.item()
