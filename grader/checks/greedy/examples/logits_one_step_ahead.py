import torch


class Solution:
    def greedy(self, model, new_chars, context, context_length, int_to_char):
        # The next logits are ready before each step: computed once ahead of the loop,
        # then at the end of every step for the step after it.
        context = context[:, -context_length:]
        logits = model(context)[:, -1, :]
        picked = []
        for _ in range(new_chars):
            next_id = logits.argmax(dim=-1, keepdim=True)
            picked.append(int_to_char[next_id.item()])
            context = torch.cat((context, next_id), dim=1)[:, -context_length:]
            logits = model(context)[:, -1, :]
        return "".join(picked)
