import torch
import torch.nn.functional as F


class Solution:
    def sample_text(self, model, context, max_new_tokens, context_length, int_to_char,
                    temperature=1.0, top_k=0, top_p=1.0, no_repeat_ngram_size=0, eos_id=None,
                    seed=0):
        g = torch.Generator().manual_seed(seed)
        tokens = context[0].tolist()
        text = ""
        n = no_repeat_ngram_size
        for _ in range(max_new_tokens):
            logits = model(torch.tensor([tokens[-context_length:]]))[0, -1].detach()
            if n > 0 and len(tokens) >= n - 1:
                seen = {tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1)}
                last = tuple(tokens[len(tokens) - (n - 1):]) if n > 1 else ()
                banned = [t for t in range(logits.shape[0]) if last + (t,) in seen]
                logits = logits.masked_fill(
                    torch.isin(torch.arange(logits.shape[0]), torch.tensor(banned, dtype=torch.long)),
                    float("-inf"))
                if len(banned) == logits.shape[0]:
                    return text
            if temperature == 0:
                nxt = logits.argmax().item()
            else:
                logits = logits * (1.0 / temperature)
                if top_k:
                    kth = torch.topk(logits, min(top_k, logits.shape[0])).values[-1]
                    logits = torch.where(logits < kth, torch.tensor(float("-inf")), logits)
                if top_p < 1.0:
                    srt, order = torch.sort(logits)
                    cdf = torch.cumsum(torch.softmax(srt, -1), -1)
                    cut = cdf <= 1 - top_p
                    cut[-1] = False
                    logits = logits.scatter(0, order[cut], float("-inf"))
                nxt = torch.multinomial(torch.softmax(logits, -1), 1, generator=g).item()
            if nxt == eos_id:
                return text
            tokens.append(nxt)
            text += int_to_char[nxt]
        return text
