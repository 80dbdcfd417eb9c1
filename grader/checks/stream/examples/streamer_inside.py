import torch
import torch.nn.functional as F
from torchtyping import TensorType


class WordStreamer:
    def __init__(self, int_to_char, callback):
        self.int_to_char = int_to_char
        self.callback = callback
        self.text = ""

    def put(self, token_ids):
        if isinstance(token_ids, torch.Tensor):
            token_ids = token_ids.reshape(-1).tolist()
        for i in token_ids:
            self.text += self.int_to_char[i]
        cut = 0
        for i, char in enumerate(self.text):
            if char in " \n":
                cut = i + 1
        if cut:
            done, self.text = self.text[:cut], self.text[cut:]
            self.callback(done)

    def end(self):
        if self.text:
            self.callback(self.text)
        self.text = ""


class Solution:
    def stream_generate(self, model, new_chars: int, context: TensorType[int],
                        context_length: int, int_to_char: dict, unit: str = "word"):
        # Words come from the WordStreamer itself; sentences from a plain buffer.
        if unit not in ("word", "sentence"):
            raise ValueError(f"unknown unit {unit!r}")
        generator = torch.manual_seed(0)
        initial_state = generator.get_state()
        ready = []
        streamer = WordStreamer(int_to_char, ready.append)
        sentence = ""
        for _ in range(new_chars):
            context = context[:, -context_length:]
            probs = F.softmax(model(context)[:, -1, :], dim=-1)
            token = torch.multinomial(probs, 1, generator=generator)
            generator.set_state(initial_state)
            context = torch.cat((context, token), dim=1)
            if unit == "word":
                streamer.put(token)
                yield from ready
                ready.clear()
            else:
                sentence += int_to_char[token.item()]
                if sentence[-1] in ".!?":
                    yield sentence
                    sentence = ""
        if unit == "word":
            streamer.end()
            yield from ready
        elif sentence:
            yield sentence
