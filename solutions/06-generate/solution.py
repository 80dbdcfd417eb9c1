import torch
import torch.nn.functional as F
from torchtyping import TensorType


class Solution:
    def generate(
        self,
        model,
        new_chars: int,
        context: TensorType[int],
        context_length: int,
        int_to_char: dict,
    ) -> str:
        generator = torch.manual_seed(0)
        initial_state = generator.get_state()
        new_text = []
        for _ in range(new_chars):
            # The model has position embeddings for context_length positions only.
            if context.shape[1] > context_length:
                context = context[:, -context_length:]
            logits = model(context)[:, -1, :]
            probs = F.softmax(logits, dim=-1)
            next_token = torch.multinomial(probs, 1, generator=generator)
            # Every step draws with the same random state: reproducible, but see
            # the statement for why this makes the text loop.
            generator.set_state(initial_state)
            context = torch.cat((context, next_token), dim=1)
            new_text.append(int_to_char[next_token.item()])
        return "".join(new_text)
