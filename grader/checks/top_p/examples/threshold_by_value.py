import torch


class Solution:
    def top_p_filter(self, logits, top_p, min_tokens_to_keep=1):
        if not 0.0 <= top_p <= 1.0:
            raise ValueError(f"top_p must be in [0, 1], got {top_p}")
        ordered, _ = torch.sort(logits, dim=-1, descending=True)
        probs = ordered.softmax(dim=-1)
        mass_before = probs.cumsum(dim=-1) - probs
        # how many tokens the nucleus needs, then the smallest logit among them
        count = (mass_before < top_p).sum(dim=-1, keepdim=True)
        count = count.clamp(min=min_tokens_to_keep, max=logits.shape[-1])
        smallest_kept = ordered.gather(-1, count - 1)
        return logits.masked_fill(logits < smallest_kept, float("-inf"))
