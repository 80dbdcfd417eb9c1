from torchtyping import TensorType


class Solution:
    def decode(self, token_ids: TensorType["T", int] | list[int], int_to_char: dict[int, str]) -> str:
        """Turn token ids back into text.

        token_ids: the ids, in order, as a LongTensor of shape (T,) or (1, T),
            or as a plain list of ints. T may be 0.
        int_to_char: token id (a Python int) -> its character.

        Returns a str of T characters: int_to_char of each id, joined in order.
        """
        raise NotImplementedError("write decode(): see README.md")
