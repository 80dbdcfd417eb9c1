import torch
from torchtyping import TensorType


class Solution:
    def generate_until(
        self,
        model,
        context: TensorType[1, "T", int],
        max_new_tokens: int,
        context_length: int,
        int_to_char: dict,
        eos_id: int,
        stop: tuple[str, ...] | list[str] = (),
    ) -> str:
        """Problem 06's generation loop, but stop at the end of the text.

        model: called as model(context) on a (1, T) LongTensor with T <= context_length;
            returns logits of shape (1, T, vocab_size).
        context: the prompt's token ids, a (1, T) LongTensor; T may exceed context_length.
        max_new_tokens: the most tokens to draw (0 or more).
        context_length: the most tokens the model can look at.
        int_to_char: token id -> character.
        eos_id: the end-of-sequence token id ("\\n" in the shipped vocabulary).
        stop: a tuple or list of non-empty stop strings (may be empty).

        Each step samples like problem 06 (generator seeded with 0, restored after
        every draw). Stop when the sampled token is eos_id (its character is not
        added), after max_new_tokens draws, or as soon as the new text ends with a
        stop string (the stop string is cut off; if several end the text at once, the
        longest is cut). Only the new text is checked for stop strings, not the prompt.

        Returns the new text only, without the end character or the stop string.
        """
        generator = torch.manual_seed(0)
        initial_state = generator.get_state()
        raise NotImplementedError("write generate_until(): see README.md")
