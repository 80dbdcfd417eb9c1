import torch
import torch.nn.functional as F
from torchtyping import TensorType


class Solution:
    def generate_until(
        self,
        model,
        context: TensorType[1, "T", int],
        max_new_tokens: int,
        context_length: int,
        int_to_char: dict,
        eos_id: int,
        stop: tuple[str, ...] | list[str] = (),
    ) -> str:
        generator = torch.manual_seed(0)
        initial_state = generator.get_state()
        text = ""
        for _ in range(max_new_tokens):
            if context.shape[1] > context_length:
                context = context[:, -context_length:]
            logits = model(context)[:, -1, :]
            probs = F.softmax(logits, dim=-1)
            next_token = torch.multinomial(probs, 1, generator=generator)
            generator.set_state(initial_state)
            # The end-of-sequence token says "this text is over": a signal, not text.
            if next_token.item() == eos_id:
                break
            context = torch.cat((context, next_token), dim=1)
            text += int_to_char[next_token.item()]
            # Only the new text can end with a stop string, and only the last
            # character can complete one, so checking the end after every
            # character stops at the first one. Like the EOS token, it is cut off
            # (the longest, if several end the text at once).
            ended = [s for s in stop if text.endswith(s)]
            if ended:
                return text[: len(text) - max(len(s) for s in ended)]
        return text
