import torch
from torchtyping import TensorType


class Solution:
    def generate_cached(
        self,
        model,
        new_chars: int,
        context: TensorType[int],
        context_length: int,
        int_to_char: dict,
    ) -> str:
        """generate(), with a KV cache: after the prompt, feed the model one token per step.

        model: as in generate(), and also
            logits, cache = model.forward_with_cache(new_tokens, cache)
            where new_tokens is a (1, T) LongTensor of tokens the cache has not seen,
            and cache is None or what the previous call returned (per layer, the keys
            and values of every token seen so far). logits: (1, T, vocab_size).
            The cached tokens plus the new ones may not exceed context_length.
        new_chars, context, context_length, int_to_char: as in generate().

        Returns the same str as generate() for the same arguments: new_chars characters.
        """
        generator = torch.manual_seed(0)
        initial_state = generator.get_state()
        raise NotImplementedError("write generate_cached(): see README.md")
