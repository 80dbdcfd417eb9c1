import torch
import torch.nn as nn
from torchtyping import TensorType


class Solution:
    def generate_until(self, model, context: TensorType[int], max_new_tokens: int, context_length: int,
                       int_to_char: dict, eos_id: int, stop=()) -> str:
        generator = torch.manual_seed(0)
        initial_state = generator.get_state()
        res = []
        for i in range(max_new_tokens):
            if len(context.T) > context_length:
                context = context[:, -context_length:]
            prediction = model(context)
            last_time_step = prediction[:, -1, :]
            probabilities = nn.functional.softmax(last_time_step, dim=-1)
            next_char = torch.multinomial(probabilities, 1, generator=generator)
            generator.set_state(initial_state)
            if next_char.item() == eos_id:
                break
            context = torch.cat((context, next_char), dim=-1)
            res.append(int_to_char[next_char.item()])
            text = "".join(res)
            for s in sorted(stop, key=len, reverse=True):
                if text.endswith(s):
                    return text[:-len(s)]
        return "".join(res)
