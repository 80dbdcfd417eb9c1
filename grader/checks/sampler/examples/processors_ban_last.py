"""Each knob a processor in a list, applied in turn; the n-gram ban is the last."""

import torch
import torch.nn.functional as F
from torchtyping import TensorType


def keep_top_k(logits, k):
    kth = torch.topk(logits, min(k, logits.numel())).values[-1]
    return logits.masked_fill(logits < kth, float("-inf"))


def keep_top_p(logits, p):
    sorted_logits, order = torch.sort(logits)
    cumulative = F.softmax(sorted_logits, dim=-1).cumsum(dim=-1)
    drop = cumulative <= 1 - p
    drop[-1] = False
    return logits.scatter(0, order[drop], float("-inf"))


def ban_repeats(logits, ids, n):
    if len(ids) < n - 1:
        return logits
    tail = tuple(ids[len(ids) - n + 1:]) if n > 1 else ()
    banned = [ids[i + n - 1] for i in range(len(ids) - n + 1)
              if tuple(ids[i:i + n - 1]) == tail]
    logits = logits.clone()
    logits[banned] = float("-inf")
    return logits


class Solution:
    def sample_text(
        self,
        model,
        context: TensorType[1, "T", int],
        max_new_tokens: int,
        context_length: int,
        int_to_char: dict,
        temperature: float = 1.0,
        top_k: int = 0,
        top_p: float = 1.0,
        no_repeat_ngram_size: int = 0,
        eos_id: int | None = None,
        seed: int = 0,
    ) -> str:
        generator = torch.Generator().manual_seed(seed)
        ids = context[0].tolist()
        processors = []
        if temperature > 0:
            processors.append(lambda logits: logits / temperature)
            if top_k > 0:
                processors.append(lambda logits: keep_top_k(logits, top_k))
            if top_p < 1.0:
                processors.append(lambda logits: keep_top_p(logits, top_p))
        if no_repeat_ngram_size > 0:
            processors.append(lambda logits: ban_repeats(logits, ids, no_repeat_ngram_size))
        text = ""
        for _ in range(max_new_tokens):
            with torch.no_grad():
                logits = model(torch.tensor([ids[-context_length:]]))[0, -1]
            for process in processors:
                logits = process(logits)
            if torch.isinf(logits).all():
                break
            if temperature == 0:
                next_id = int(logits.argmax())
            else:
                probs = F.softmax(logits, dim=-1)
                next_id = torch.multinomial(probs, 1, generator=generator).item()
            if next_id == eos_id:
                break
            ids.append(next_id)
            text += int_to_char[next_id]
        return text
