import math

import torch
import torch.nn.functional as F
from torchtyping import TensorType


class Solution:
    def train_loop(
        self, model: torch.nn.Module, optimizer: torch.optim.Optimizer,
        train_data: TensorType["N", int], val_data: TensorType["M", int],
        generator: torch.Generator, eval_generator: torch.Generator,
        steps: int, batch_size: int, context_length: int,
        max_lr: float, min_lr: float, warmup_steps: int, max_norm: float,
        eval_every: int, eval_batches: int,
    ) -> list[tuple[int, float, float]]:
        # Drawn once, before training: every evaluation then measures the same
        # windows, so that two values of the log differ only because the model did.
        fixed = [[self.get_batch(data, context_length, batch_size, eval_generator)
                  for _ in range(eval_batches)] for data in (train_data, val_data)]
        log = []
        for step in range(steps + 1):
            if step % eval_every == 0 or step == steps:
                log.append((step, *(self.evaluate(model, batches) for batches in fixed)))
            if step == steps:
                break
            rate = self.learning_rate(step, max_lr, min_lr, warmup_steps, steps)
            for group in optimizer.param_groups:
                group["lr"] = rate
            x, y = self.get_batch(train_data, context_length, batch_size, generator)
            optimizer.zero_grad(set_to_none=True)
            logits = model(x)
            loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
            loss.backward()
            # Between backward() and step(): the step follows the clipped gradients.
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            optimizer.step()
        return log

    def evaluate(self, model: torch.nn.Module, batches: list) -> float:
        """The mean loss over fixed batches, in evaluation mode and without a graph."""
        model.eval()
        with torch.no_grad():
            losses = [F.cross_entropy(model(x).flatten(0, 1), y.flatten()).item()
                      for x, y in batches]
        model.train()  # the next step learns again
        return sum(losses) / len(losses)

    def get_batch(self, data: torch.Tensor, context_length: int, batch_size: int,
                  generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        """Problem 19's batch: random windows and their targets, from `generator`."""
        starts = torch.randint(len(data) - context_length, (batch_size,), generator=generator)
        x = torch.stack([data[s : s + context_length] for s in starts.tolist()])
        y = torch.stack([data[s + 1 : s + context_length + 1] for s in starts.tolist()])
        return x, y

    def learning_rate(self, step: int, max_lr: float, min_lr: float, warmup_steps: int,
                      steps: int) -> float:
        """Problem 27's schedule: warm-up, then cosine decay to min_lr."""
        if step < warmup_steps:
            return max_lr * (step + 1) / warmup_steps
        progress = min(1.0, (step - warmup_steps) / max(1, steps - warmup_steps))
        return min_lr + 0.5 * (max_lr - min_lr) * (1 + math.cos(math.pi * progress))
