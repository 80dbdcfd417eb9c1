import torch
import torch.nn.functional as F
from torchtyping import TensorType


class Solution:
    def generate_cached(self, model, new_chars: int, context: TensorType[int],
                        context_length: int, int_to_char: dict) -> str:
        generator = torch.manual_seed(0)
        initial_state = generator.get_state()
        context = context[:, -context_length:]
        cache = None
        fresh = context
        text = []
        for _ in range(new_chars):
            logits, cache = model.forward_with_cache(fresh, cache)
            probs = F.softmax(logits[:, -1, :], dim=-1)
            next_token = torch.multinomial(probs, 1, generator=generator)
            generator.set_state(initial_state)
            text.append(int_to_char[next_token.item()])
            context = torch.cat((context, next_token), dim=1)
            if context.shape[1] > context_length:
                # The window is full: build the cache again from the cropped context.
                context = context[:, -context_length:]
                cache, fresh = None, context
            else:
                fresh = next_token
        return "".join(text)
