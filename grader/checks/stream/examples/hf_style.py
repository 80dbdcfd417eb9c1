import torch
import torch.nn.functional as F
from torchtyping import TensorType


class WordStreamer:
    """Keeps every id, decodes them all each time, and remembers how much was printed."""

    def __init__(self, int_to_char, callback):
        self.int_to_char = int_to_char
        self.callback = callback
        self.token_cache = []
        self.print_len = 0

    def put(self, token_ids):
        if torch.is_tensor(token_ids):
            token_ids = token_ids.view(-1).tolist()
        self.token_cache.extend(token_ids)
        text = "".join(self.int_to_char[i] for i in self.token_cache)
        last = max(text.rfind(" "), text.rfind("\n")) + 1
        if last > self.print_len:
            self.callback(text[self.print_len:last])
            self.print_len = last

    def end(self):
        text = "".join(self.int_to_char[i] for i in self.token_cache)
        if len(text) > self.print_len:
            self.callback(text[self.print_len:])
        self.token_cache, self.print_len = [], 0


class Solution:
    def stream_generate(self, model, new_chars: int, context: TensorType[int],
                        context_length: int, int_to_char: dict, unit: str = "word"):
        # With a KV cache: still one model call per character.
        if unit == "word":
            ends = {" ", "\n"}
        elif unit == "sentence":
            ends = {".", "!", "?"}
        else:
            raise ValueError("unit is 'word' or 'sentence'")
        generator = torch.manual_seed(0)
        initial_state = generator.get_state()
        context = context[:, -context_length:]
        cache, fresh, buffer = None, context, []
        for _ in range(new_chars):
            logits, cache = model.forward_with_cache(fresh, cache)
            next_token = torch.multinomial(F.softmax(logits[:, -1, :], dim=-1), 1,
                                           generator=generator)
            generator.set_state(initial_state)
            buffer.append(int_to_char[next_token.item()])
            if buffer[-1] in ends:
                yield "".join(buffer)
                buffer = []
            context = torch.cat((context, next_token), dim=1)
            if context.shape[1] > context_length:
                context = context[:, -context_length:]
                cache, fresh = None, context
            else:
                fresh = next_token
        if buffer:
            yield "".join(buffer)
