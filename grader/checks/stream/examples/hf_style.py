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
        past_key_values, input_ids, buffer = None, context, []
        for _ in range(new_chars):
            # The cache's own length says when the window is full: start it again from
            # the window's last tokens, the new one among them.
            if past_key_values is not None and past_key_values[0][0].shape[2] == context_length:
                past_key_values, input_ids = None, context[:, -context_length:]
            logits, past_key_values = model.forward_with_cache(input_ids, past_key_values)
            next_token = torch.multinomial(F.softmax(logits[:, -1, :], dim=-1), 1,
                                           generator=generator)
            generator.set_state(initial_state)
            buffer.append(int_to_char[next_token.item()])
            if buffer[-1] in ends:
                yield "".join(buffer)
                buffer = []
            context = torch.cat((context, next_token), dim=1)
            input_ids = next_token
        if buffer:
            yield "".join(buffer)
