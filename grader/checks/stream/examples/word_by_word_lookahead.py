import re

import torch
from torchtyping import TensorType


class WordStreamer:
    """Calls the callback once per finished word (several per put() if need be)."""

    def __init__(self, int_to_char, callback):
        self.int_to_char = int_to_char
        self.callback = callback
        self.pending = ""

    def put(self, token_ids):
        ids = torch.as_tensor(token_ids, dtype=torch.long).flatten()
        self.pending += "".join(self.int_to_char[int(i)] for i in ids)
        *words, self.pending = re.split(r"(?<=[ \n])", self.pending)
        for word in words:
            self.callback(word)

    def end(self):
        if self.pending:
            self.callback(self.pending)
            self.pending = ""


class Solution:
    def stream_generate(self, model, new_chars: int, context: TensorType[int],
                        context_length: int, int_to_char: dict, unit: str = "word"):
        # Runs the model one step ahead: the logits for the next character are ready
        # before the current chunk is handed out (one more model call in all).
        ends = {"word": " \n", "sentence": ".!?"}.get(unit)
        if ends is None:
            raise ValueError(f"unit must be 'word' or 'sentence', got {unit!r}")
        generator = torch.Generator().manual_seed(0)
        initial_state = generator.get_state()
        with torch.no_grad():
            window = context[:, -context_length:]
            logits = model(window)[0, -1] if new_chars else None
            chunk = ""
            for step in range(new_chars):
                probs = torch.softmax(logits.double(), dim=-1)
                token = torch.multinomial(probs, 1, generator=generator)
                generator.set_state(initial_state)
                window = torch.cat([window, token.view(1, 1)], dim=1)[:, -context_length:]
                if step + 1 < new_chars:
                    logits = model(window)[0, -1]
                chunk += int_to_char[int(token)]
                if chunk[-1] in ends:
                    yield chunk
                    chunk = ""
            if chunk:
                yield chunk
