from collections.abc import Callable, Iterator

import torch
import torch.nn.functional as F
from torchtyping import TensorType

WORD_ENDS = (" ", "\n")
SENTENCE_ENDS = (".", "!", "?")


class WordStreamer:
    """Receives token ids as they are made and passes on whole words only."""

    def __init__(self, int_to_char: dict[int, str], callback: Callable[[str], None]) -> None:
        self.int_to_char = int_to_char
        self.callback = callback
        self.text = ""  # received, not yet passed on: the start of an unfinished word

    def put(self, token_ids: TensorType[..., int] | list[int]) -> None:
        if isinstance(token_ids, torch.Tensor):
            token_ids = token_ids.flatten().tolist()  # any shape, even a single 0-d id
        self.text += "".join(self.int_to_char[i] for i in token_ids)
        # Every word before the last space or newline is complete: pass them on,
        # separator included, so that the pieces join back into the exact text.
        cut = max(self.text.rfind(" "), self.text.rfind("\n")) + 1
        if cut:
            self.callback(self.text[:cut])
            self.text = self.text[cut:]

    def end(self) -> None:
        # No more tokens: the unfinished word is as finished as it will get.
        if self.text:
            self.callback(self.text)
            self.text = ""


class Solution:
    def stream_generate(
        self,
        model,
        new_chars: int,
        context: TensorType[int],
        context_length: int,
        int_to_char: dict,
        unit: str = "word",
    ) -> Iterator[str]:
        if unit not in ("word", "sentence"):
            raise ValueError(f"unit must be 'word' or 'sentence', not {unit!r}")
        ends = WORD_ENDS if unit == "word" else SENTENCE_ENDS
        generator = torch.manual_seed(0)
        initial_state = generator.get_state()
        chunk = ""
        for _ in range(new_chars):
            # The same step as generate(): crop, forward, sample, restore, append.
            if context.shape[1] > context_length:
                context = context[:, -context_length:]
            logits = model(context)[:, -1, :]
            probs = F.softmax(logits, dim=-1)
            next_token = torch.multinomial(probs, 1, generator=generator)
            generator.set_state(initial_state)
            context = torch.cat((context, next_token), dim=1)
            chunk += int_to_char[next_token.item()]
            # Hand the chunk over the moment its last character exists; the
            # caller sees it while the next characters are still being made.
            if chunk.endswith(ends):
                yield chunk
                chunk = ""
        if chunk:
            yield chunk
