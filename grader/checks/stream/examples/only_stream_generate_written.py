# stream_generate() written, WordStreamer still the starter's.
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torchtyping import TensorType


class WordStreamer:
    """Receives token ids as they are made and passes on whole words only."""

    def __init__(self, int_to_char: dict[int, str], callback: Callable[[str], None]) -> None:
        """int_to_char: token id -> character. callback: called with each piece of text."""
        self.int_to_char = int_to_char
        self.callback = callback
        self.text = ""  # characters received but not passed on yet

    def put(self, token_ids: TensorType[..., int] | list[int]) -> None:
        """Take the next token ids and pass on every word they complete.

        token_ids: a list of ints, or a LongTensor of any shape (a generation step
            gives a (1, 1) tensor; a 0-d tensor is one id); possibly empty.

        Calls self.callback once with everything up to and including the last
        space or newline received so far, if there is any; keeps the rest (an
        unfinished word) for later. Never calls it with "".
        """
        raise NotImplementedError("write WordStreamer.put(): see README.md")

    def end(self) -> None:
        """No more tokens: pass on whatever is left, if anything."""
        raise NotImplementedError("write WordStreamer.end(): see README.md")


class Solution:
    def stream_generate(self, model, new_chars: int, context: TensorType[int],
                        context_length: int, int_to_char: dict, unit: str = "word"):
        if unit not in ("word", "sentence"):
            raise ValueError("unit must be 'word' or 'sentence'")
        ends = " \n" if unit == "word" else ".!?"
        generator = torch.manual_seed(0)
        initial_state = generator.get_state()
        chunk = ""
        for _ in range(new_chars):
            if context.shape[1] > context_length:
                context = context[:, -context_length:]
            probs = F.softmax(model(context)[:, -1, :], dim=-1)
            next_token = torch.multinomial(probs, 1, generator=generator)
            generator.set_state(initial_state)
            context = torch.cat((context, next_token), dim=1)
            chunk += int_to_char[next_token.item()]
            if chunk[-1] in ends:
                yield chunk
                chunk = ""
        if chunk:
            yield chunk
