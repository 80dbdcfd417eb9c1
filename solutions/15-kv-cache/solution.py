import torch
import torch.nn.functional as F
from torchtyping import TensorType


class Solution:
    def generate_cached(
        self,
        model,
        new_chars: int,
        context: TensorType[int],
        context_length: int,
        int_to_char: dict,
    ) -> str:
        generator = torch.manual_seed(0)
        initial_state = generator.get_state()
        context = context[:, -context_length:]  # the window the model reads
        cache = None  # each layer's (keys, values) for the tokens the model has seen
        fresh = context  # the tokens it has not seen yet: the whole prompt at first
        new_text = []
        for _ in range(new_chars):
            logits, cache = model.forward_with_cache(fresh, cache)
            probs = F.softmax(logits[:, -1, :], dim=-1)
            next_token = torch.multinomial(probs, 1, generator=generator)
            generator.set_state(initial_state)
            new_text.append(int_to_char[next_token.item()])
            context = torch.cat((context, next_token), dim=1)
            if context.shape[1] <= context_length:
                fresh = next_token  # room left: the model only needs the new token
            else:
                # The window slides by one, so every token moves to a new position.
                # Each cached key was computed with its old position embedding, so
                # none of them is valid any more: start again from the new window.
                context = context[:, -context_length:]
                cache, fresh = None, context
        return "".join(new_text)
