import torch
import torch.nn.functional as F
from torchtyping import TensorType


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
        # Seeded once and never rewound: each draw gets fresh random numbers,
        # so the same window can be followed by different tokens.
        generator = torch.Generator().manual_seed(seed)
        new_tokens = []
        for _ in range(max_new_tokens):
            # The model sees at most context_length tokens; the n-gram ban sees everything.
            context_cond = context if context.shape[1] <= context_length \
                else context[:, -context_length:]
            logits = model(context_cond)[:, -1, :]
            if no_repeat_ngram_size > 0:
                logits = _ban_repeated_ngrams(logits, context[0].tolist(), no_repeat_ngram_size)
                if bool(torch.isinf(logits).all()):
                    break  # every token would repeat an n-gram: nothing left to say
            if temperature == 0:
                next_token = logits.argmax(dim=-1, keepdim=True)  # greedy: no draw at all
            else:
                # Temperature first: top-p measures probabilities, and temperature
                # changes them (top-k would keep the same tokens either way).
                logits = logits / temperature
                if top_k > 0:
                    logits = _top_k(logits, top_k)
                if top_p < 1.0:
                    logits = _top_p(logits, top_p)
                probs = F.softmax(logits, dim=-1)
                next_token = torch.multinomial(probs, num_samples=1, generator=generator)
            if next_token.item() == eos_id:
                break  # the end-of-sequence token ends the text and is not part of it
            context = torch.cat((context, next_token), dim=1)
            new_tokens.append(next_token.item())
        return "".join(int_to_char[i] for i in new_tokens)


def _ban_repeated_ngrams(logits, ids, n):
    """-inf for every token that would complete an n-gram already in ids."""
    start = len(ids) - (n - 1)  # the last n - 1 tokens are ids[start:]
    banned = [ids[i + n - 1] for i in range(max(start, 0)) if ids[i:i + n - 1] == ids[start:]]
    logits = logits.clone()
    logits[:, banned] = float("-inf")
    return logits


def _top_k(logits, k):
    """Keep every logit >= the k-th largest (ties at the boundary all stay)."""
    v, _ = torch.topk(logits, min(k, logits.size(-1)))
    return logits.masked_fill(logits < v[:, [-1]], float("-inf"))


def _top_p(logits, top_p):
    """Keep the smallest set of most likely tokens holding at least top_p of the probability."""
    sorted_logits, sorted_indices = torch.sort(logits, descending=False)
    cumulative = F.softmax(sorted_logits, dim=-1).cumsum(dim=-1)
    remove = cumulative <= 1 - top_p
    remove[:, -1:] = False  # the most likely token always stays
    remove = remove.scatter(1, sorted_indices, remove)
    return logits.masked_fill(remove, float("-inf"))
