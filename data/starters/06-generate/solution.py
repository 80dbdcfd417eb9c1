import torch
from torchtyping import TensorType


class Solution:
    def generate(
        self,
        model,
        new_chars: int,
        context: TensorType[int],
        context_length: int,
        int_to_char: dict,
    ) -> str:
        """Continue `context` by `new_chars` characters sampled from `model`.

        model: called as model(context) on a (1, T) LongTensor with T <= context_length;
            returns logits of shape (1, T, vocab_size).
        new_chars: how many characters to generate (0 or more).
        context: the prompt's token ids, a (1, T) LongTensor; T may exceed context_length.
        context_length: the most tokens the model can look at.
        int_to_char: token id -> character.

        Returns only the new_chars new characters, as a str.
        """
        generator = torch.manual_seed(0)
        initial_state = generator.get_state()
        raise NotImplementedError("write generate(): see README.md")
