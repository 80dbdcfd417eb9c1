import math

import torch
import torch.nn.functional as F


def get_batch(data, context_length, batch_size, generator):
    ix = torch.randint(len(data) - context_length, (batch_size,), generator=generator)
    x = torch.stack([data[i:i + context_length] for i in ix])
    y = torch.stack([data[i + 1:i + context_length + 1] for i in ix])
    return x, y


def get_lr(it, max_lr, min_lr, warmup_steps, steps):
    if it < warmup_steps:
        return max_lr * (it + 1) / warmup_steps
    if it > steps:
        return min_lr
    decay_ratio = (it - warmup_steps) / (steps - warmup_steps)
    coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
    return min_lr + coeff * (max_lr - min_lr)


@torch.no_grad()
def estimate_loss(model, splits):
    out = []
    model.eval()
    for batches in splits:
        losses = torch.zeros(len(batches))
        for k, (X, Y) in enumerate(batches):
            logits = model(X)
            B, T, C = logits.shape
            losses[k] = F.cross_entropy(logits.view(B * T, C), Y.view(B * T)).item()
        out.append(losses.mean().item())
    model.train()
    return out


class Solution:
    def train_loop(self, model, optimizer, train_data, val_data, generator, eval_generator,
                   steps, batch_size, context_length, max_lr, min_lr, warmup_steps, max_norm,
                   eval_every, eval_batches):
        splits = []
        for data in (train_data, val_data):
            splits.append([get_batch(data, context_length, batch_size, eval_generator)
                           for _ in range(eval_batches)])
        log = []
        for iter in range(steps + 1):
            if iter % eval_every == 0 or iter == steps:
                train_loss, val_loss = estimate_loss(model, splits)
                log.append((iter, train_loss, val_loss))
            if iter == steps:
                break
            lr = get_lr(iter, max_lr, min_lr, warmup_steps, steps)
            for param_group in optimizer.param_groups:
                param_group["lr"] = lr
            xb, yb = get_batch(train_data, context_length, batch_size, generator)
            logits = model(xb)
            B, T, C = logits.shape
            loss = F.cross_entropy(logits.view(B * T, C), yb.view(B * T))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            optimizer.step()
        return log
