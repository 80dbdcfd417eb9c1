import math

import torch
import torch.nn.functional as F


class Step:
    """Problem 25's train_step, as it was written there."""

    def train_step(self, model, optimizer, x, y):
        optimizer.zero_grad(set_to_none=True)
        logits = model(x)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1))
        loss.backward()
        optimizer.step()
        return loss.item()


class Solution:
    """Keeps problem 25's step and clips in a hook the optimizer runs at the start of
    each step(), after backward()."""

    def train_loop(self, model, optimizer, train_data, val_data, generator, eval_generator,
                   steps, batch_size, context_length, max_lr, min_lr, warmup_steps, max_norm,
                   eval_every, eval_batches):
        def get_batch(data, g):
            starts = torch.randint(len(data) - context_length, (batch_size,), generator=g)
            x = torch.stack([data[s:s + context_length] for s in starts.tolist()])
            y = torch.stack([data[s + 1:s + context_length + 1] for s in starts.tolist()])
            return x, y

        def rate(step):
            if step < warmup_steps:
                return max_lr * (step + 1) / warmup_steps
            progress = min(1.0, (step - warmup_steps) / max(1, steps - warmup_steps))
            return min_lr + 0.5 * (max_lr - min_lr) * (1 + math.cos(math.pi * progress))

        train_batches = [get_batch(train_data, eval_generator) for _ in range(eval_batches)]
        val_batches = [get_batch(val_data, eval_generator) for _ in range(eval_batches)]

        def mean_loss(batches):
            model.eval()
            with torch.no_grad():
                total = sum(F.cross_entropy(model(x).flatten(0, 1), y.flatten()).item()
                            for x, y in batches)
            model.train()
            return total / len(batches)

        params = list(model.parameters())

        def clip(opt, args, kwargs):
            torch.nn.utils.clip_grad_norm_(params, max_norm)  # a hook must return None

        hook = optimizer.register_step_pre_hook(clip)
        log = []
        try:
            for step in range(steps):
                if step % eval_every == 0:
                    log.append((step, mean_loss(train_batches), mean_loss(val_batches)))
                for group in optimizer.param_groups:
                    group.update(lr=rate(step))
                Step().train_step(model, optimizer, *get_batch(train_data, generator))
        finally:
            hook.remove()
        log.append((steps, mean_loss(train_batches), mean_loss(val_batches)))
        return log
