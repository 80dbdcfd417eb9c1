from torchtyping import TensorType


class Solution:
    def greedy(
        self,
        model,
        new_chars: int,
        context: TensorType[int],
        context_length: int,
        int_to_char: dict,
    ) -> str:
        """Continue `context` by `new_chars` characters, always taking the most likely token.

        model: called as model(context) on a (1, T) LongTensor with T <= context_length;
            returns logits of shape (1, T, vocab_size).
        new_chars: how many characters to generate (0 or more).
        context: the prompt's token ids, a (1, T) LongTensor; T may exceed context_length.
        context_length: the most tokens the model can look at.
        int_to_char: token id -> character.

        Each step crops the context to its last context_length tokens, runs the
        model, and appends the token with the largest logit at the last position
        (the lowest token id among equal largest logits). No randomness at all.
        Returns only the new_chars new characters, as a str.
        """
        raise NotImplementedError("write greedy(): see README.md")
