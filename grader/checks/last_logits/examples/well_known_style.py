import torch


class Solution:
    def last_logits(self, model, context):
        logits = model(context)
        return logits[:, -1, :]
