import torch
import torch.nn as nn
from torchtyping import TensorType


class Solution:
    def generate_cached(self, model, new_chars: int, context: TensorType[int],
                        context_length: int, int_to_char: dict) -> str:
        generator = torch.manual_seed(0)
        initial_state = generator.get_state()
        res = []
        kv_cache = None
        for _ in range(new_chars):
            if len(context.T) > context_length:
                context = context[:, -context_length:]
                kv_cache = None
            if kv_cache is None:
                prediction, kv_cache = model.forward_with_cache(context, None)
            else:
                prediction, kv_cache = model.forward_with_cache(context[:, -1:], kv_cache)
            probabilities = nn.functional.softmax(prediction[:, -1, :], dim=-1)
            next_char = torch.multinomial(probabilities, 1, generator=generator)
            generator.set_state(initial_state)
            context = torch.cat((context, next_char), dim=-1)
            res.append(int_to_char[next_char.item()])
        return "".join(res)
