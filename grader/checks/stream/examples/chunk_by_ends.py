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
