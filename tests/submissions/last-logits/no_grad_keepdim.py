import torch


class Solution:
    def last_logits(self, model, context):
        with torch.no_grad():
            logits = model(context)
        last = logits.shape[1] - 1
        return logits.narrow(1, last, 1).squeeze(1)
