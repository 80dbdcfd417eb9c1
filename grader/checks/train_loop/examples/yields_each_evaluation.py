import math

import torch
import torch.nn.functional as F


class Solution:
    """Yields the log entry by entry; clips by hand; evaluates all fixed batches of a
    text as one large batch, under inference_mode."""

    def train_loop(self, model, optimizer, train_data, val_data, generator, eval_generator,
                   steps, batch_size, context_length, max_lr, min_lr, warmup_steps, max_norm,
                   eval_every, eval_batches):
        def batch(data, g):
            starts = torch.randint(len(data) - context_length, (batch_size,), generator=g)
            offsets = torch.arange(context_length)
            return data[starts[:, None] + offsets], data[starts[:, None] + offsets + 1]

        fixed = []
        for data in (train_data, val_data):
            drawn = [batch(data, eval_generator) for _ in range(eval_batches)]
            fixed.append((torch.cat([x for x, _ in drawn]), torch.cat([y for _, y in drawn])))

        def evaluate(x, y):
            model.eval()
            with torch.inference_mode():
                loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten())
            model.train()
            return float(loss)

        for step in range(steps + 1):
            if step % eval_every == 0 or step == steps:
                yield step, evaluate(*fixed[0]), evaluate(*fixed[1])
            if step == steps:
                return
            if step < warmup_steps:
                lr = max_lr * (step + 1) / warmup_steps
            else:
                t = min(1.0, (step - warmup_steps) / max(1, steps - warmup_steps))
                lr = min_lr + (max_lr - min_lr) * (1 + math.cos(math.pi * t)) / 2
            for group in optimizer.param_groups:
                group["lr"] = lr
            x, y = batch(train_data, generator)
            optimizer.zero_grad()
            F.cross_entropy(model(x).flatten(0, 1), y.flatten()).backward()
            grads = [p.grad for p in model.parameters() if p.grad is not None]
            total = torch.sqrt(sum((g.double() ** 2).sum() for g in grads)).float()
            scale = max_norm / (total + 1e-6)
            if scale < 1:
                for g in grads:
                    g.mul_(scale)
            optimizer.step()
