import torch
from torchtyping import TensorType


class Solution:
    def greedy(self, model, new_chars: int, context: TensorType[int], context_length: int, int_to_char: dict) -> str:
        full = context[0].tolist()
        for _ in range(new_chars):
            window = context[:, -context_length:]
            next_token = model(window)[:, -1, :].argmax(dim=-1, keepdim=True)
            context = torch.cat((context, next_token), dim=1)
            full.append(next_token.item())
        return "".join(int_to_char[i] for i in full)
