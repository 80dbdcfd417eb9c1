# WordStreamer written, stream_generate() still the starter's.
from collections.abc import Iterator

import torch
from torchtyping import TensorType


class WordStreamer:
    def __init__(self, int_to_char, callback):
        self.int_to_char = int_to_char
        self.callback = callback
        self.text = ""

    def put(self, token_ids):
        if isinstance(token_ids, torch.Tensor):
            token_ids = token_ids.flatten().tolist()
        self.text += "".join(self.int_to_char[i] for i in token_ids)
        cut = max(self.text.rfind(" "), self.text.rfind("\n")) + 1
        if cut:
            self.callback(self.text[:cut])
            self.text = self.text[cut:]

    def end(self):
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
        """Generate exactly like generate() and yield the text a chunk at a time.

        model, new_chars, context, context_length, int_to_char: as in generate().
        unit: "word" (a chunk ends right after a space or a newline) or "sentence"
            (a chunk ends right after ".", "!" or "?"); anything else raises ValueError.

        Yields non-empty str chunks, each as soon as its last character is sampled;
        what is left at the end is the last chunk. Joined, the chunks are exactly
        generate()'s text for the same arguments.
        """
        raise NotImplementedError("write stream_generate(): see README.md")
