import torch
from torch.nn import functional as F


class Solution:
    @torch.no_grad()
    def sample_text(self, model, context, max_new_tokens, context_length, int_to_char,
                    temperature=1.0, top_k=0, top_p=1.0, no_repeat_ngram_size=0, eos_id=None,
                    seed=0):
        torch.manual_seed(seed)  # the global generator, seeded once
        idx = context
        start = idx.size(1)
        for _ in range(max_new_tokens):
            idx_cond = idx if idx.size(1) <= context_length else idx[:, -context_length:]
            logits = model(idx_cond)[:, -1, :]
            n = no_repeat_ngram_size
            if n > 0:
                ids = idx[0].tolist()
                tail = ids[len(ids) - n + 1:] if n > 1 else []
                if len(ids) >= n - 1:
                    for i in range(len(ids) - n + 1):
                        if ids[i:i + n - 1] == tail:
                            logits[0, ids[i + n - 1]] = -float('Inf')
                if torch.isinf(logits).all():
                    break
            if temperature == 0:
                idx_next = torch.argmax(logits, dim=-1, keepdim=True)
            else:
                logits = logits / temperature
                if top_k > 0:
                    v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                    logits[logits < v[:, [-1]]] = -float('Inf')
                if top_p < 1.0:
                    sorted_logits, sorted_idx = torch.sort(logits)
                    cum = F.softmax(sorted_logits, dim=-1).cumsum(dim=-1)
                    remove = cum <= 1 - top_p
                    remove[..., -1] = False
                    logits[0, sorted_idx[0][remove[0]]] = -float('Inf')
                probs = F.softmax(logits, dim=-1)
                idx_next = torch.multinomial(probs, num_samples=1)
            if eos_id is not None and idx_next.item() == eos_id:
                break
            idx = torch.cat((idx, idx_next), dim=1)
        return "".join(int_to_char[i] for i in idx[0, start:].tolist())
