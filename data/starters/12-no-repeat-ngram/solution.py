from torchtyping import TensorType


class Solution:
    def no_repeat_ngram(
        self,
        logits: TensorType[..., "vocab_size", float],
        token_ids: list[int] | TensorType["B", "T", int],
        n: int,
    ) -> TensorType[..., "vocab_size", float]:
        """Ban every token that would repeat an n-gram already in the text.

        logits: the next-token logits, a float tensor of shape (vocab_size,) for one
            text or (B, vocab_size) for a batch of B texts.
        token_ids: the text so far (prompt included):
            - for (vocab_size,) logits, a list of ints;
            - for (B, vocab_size) logits, a (B, T) LongTensor: row b goes with logits[b].
            T may be 0.
        n: the n-gram size, n >= 1.

        An n-gram is n tokens in a row. The next token t is banned when the last n - 1
        tokens followed by t form an n-gram that already occurs in the text. n = 1 bans
        every token that occurs; fewer than n - 1 tokens bans nothing.

        Returns a NEW tensor with the same shape and dtype as logits: banned entries are
        float("-inf"), every other entry is exactly the input's value. logits itself
        must not change.
        """
        raise NotImplementedError("write no_repeat_ngram(): see README.md")
