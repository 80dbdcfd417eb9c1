import torch


class Solution:
    def loss(self, logits, targets):
        log_probs = torch.log_softmax(logits, dim=-1)
        picked = log_probs.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
        return -picked.mean()
