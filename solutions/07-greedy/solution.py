import torch
from torchtyping import TensorType


class Solution:
    def greedy(
        self,
        model,
        new_chars: int,
        context: TensorType[int],
        context_length: int,
        int_to_char: dict,
    ) -> str:
        new_text = []
        for _ in range(new_chars):
            # The model has position embeddings for context_length positions only.
            if context.shape[1] > context_length:
                context = context[:, -context_length:]
            logits = model(context)[:, -1, :]
            # No softmax needed: it keeps the order, so the largest logit is the
            # most likely token. argmax returns the first index on ties.
            next_token = logits.argmax(dim=-1, keepdim=True)
            context = torch.cat((context, next_token), dim=1)
            new_text.append(int_to_char[next_token.item()])
        return "".join(new_text)
