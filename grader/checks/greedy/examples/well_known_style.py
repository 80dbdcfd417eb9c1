import torch
import torch.nn as nn
from torchtyping import TensorType


class Solution:
    def greedy(self, model, new_chars: int, context: TensorType[int], context_length: int, int_to_char: dict) -> str:
        res = []
        for i in range(new_chars):
            if len(context.T) > context_length:
                context = context[:, -context_length:]
            prediction = model(context)
            last_time_step = prediction[:, -1, :]
            next_char = nn.functional.softmax(last_time_step, dim=-1).argmax(dim=-1, keepdim=True)
            context = torch.cat((context, next_char), dim=-1)
            res.append(int_to_char[next_char.item()])
        return "".join(res)
