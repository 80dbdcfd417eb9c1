import torch


class Solution:
    def _banned(self, ids, n):
        followers = {}
        for i in range(len(ids) - n + 1):
            followers.setdefault(tuple(ids[i:i + n - 1]), set()).add(ids[i + n - 1])
        return followers.get(tuple(ids[len(ids) - n + 1:]) if n > 1 else (), set()) \
            if len(ids) >= n - 1 else set()

    def sample_text(self, model, context, max_new_tokens, context_length, int_to_char,
                    temperature=1.0, top_k=0, top_p=1.0, no_repeat_ngram_size=0, eos_id=None,
                    seed=0):
        gen = torch.Generator()
        gen.manual_seed(seed)
        ids = context[0].tolist()
        out = []
        while len(out) < max_new_tokens:
            with torch.no_grad():
                logits = model(torch.tensor([ids[-context_length:]]))[0, -1].double()
            if no_repeat_ngram_size:
                banned = self._banned(ids, no_repeat_ngram_size)
                if len(banned) == logits.numel():
                    break
                mask = torch.zeros_like(logits, dtype=torch.bool)
                mask[list(banned)] = True
                logits = torch.where(mask, torch.full_like(logits, float("-inf")), logits)
            if temperature == 0:
                token = int(torch.argmax(logits))
            else:
                logits = logits / temperature
                if 0 < top_k < logits.numel():
                    kth = logits.sort(descending=True).values[top_k - 1]
                    logits = torch.where(logits >= kth, logits, torch.tensor(float("-inf"),
                                                                             dtype=logits.dtype))
                if top_p < 1.0:
                    # descending: drop a token when the tokens before it already hold top_p
                    values, order = logits.sort(descending=True)
                    p = torch.softmax(values, dim=0)
                    before = p.cumsum(0) - p
                    drop = before >= top_p
                    drop[0] = False
                    logits = logits.clone()
                    logits[order[drop]] = float("-inf")
                probs = torch.softmax(logits, dim=0)
                token = int(torch.multinomial(probs, 1, generator=gen))
            if token == eos_id:
                break
            ids.append(token)
            out.append(int_to_char[token])
        return "".join(out)
