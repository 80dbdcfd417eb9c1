import torch
import torch.nn.functional as F
from torchtyping import TensorType


class Solution:
    def generate_cached(self, model, new_chars: int, context: TensorType[int],
                        context_length: int, int_to_char: dict) -> str:
        # Once the window is full every step recomputes it anyway, so plain model()
        # calls do the same job there; the cache only serves while there is room.
        generator = torch.manual_seed(0)
        initial_state = generator.get_state()
        text = ""
        cache = None
        with torch.no_grad():
            for _ in range(new_chars):
                if context.shape[1] > context_length:
                    context = context[:, -context_length:]
                    cache = None
                    logits = model(context)
                elif cache is None:
                    logits, cache = model.forward_with_cache(context)
                else:
                    logits, cache = model.forward_with_cache(context[:, -1:], cache)
                logits = logits[:, -1, :]
                probs = F.softmax(logits - logits.max(), dim=-1)
                next_token = torch.multinomial(probs, 1, generator=generator)
                generator.set_state(initial_state)
                context = torch.cat([context, next_token], dim=1)
                text += int_to_char[next_token.item()]
        return text
