from collections.abc import Callable, Iterator

import torch
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

        Passes on with self.callback everything up to and including the last
        space or newline received so far, if there is any (in one call, or one
        per word); keeps the rest (an unfinished word) for later.
        """
        raise NotImplementedError("write WordStreamer.put(): see README.md")

    def end(self) -> None:
        """No more tokens: pass on whatever is left, if anything."""
        raise NotImplementedError("write WordStreamer.end(): see README.md")


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
        """Generate exactly like generate() and yield the text a chunk at a time.

        model, new_chars, context, context_length, int_to_char: as in generate().
        unit: "word" (a chunk ends right after a space or a newline) or "sentence"
            (a chunk ends right after ".", "!" or "?"); anything else raises ValueError.

        Yields non-empty str chunks, each as soon as its last character is sampled;
        what is left at the end is the last chunk. Joined, the chunks are exactly
        generate()'s text for the same arguments.
        """
        generator = torch.manual_seed(0)
        initial_state = generator.get_state()
        raise NotImplementedError("write stream_generate(): see README.md")
