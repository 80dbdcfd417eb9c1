from torchtyping import TensorType


class Solution:
    def encode(self, text: str, corpus: str) -> TensorType["T", int]:
        """Turn `text` into token ids, in the vocabulary of `corpus`.

        corpus: the training text; its vocabulary is every distinct character it
            holds, sorted, and a character's id is its position in that list.
        text: the text to encode (it may be empty).

        Returns a LongTensor of shape (T,), T = len(text): the id of each
        character of text, in order. Raises ValueError, naming the characters,
        if text holds any character that corpus does not.
        """
        raise NotImplementedError("write encode(): see README.md")
