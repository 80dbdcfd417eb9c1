from torchtyping import TensorType


class Solution:
    def sample_text(
        self,
        model,
        context: TensorType[1, "T", int],
        max_new_tokens: int,
        context_length: int,
        int_to_char: dict,
        temperature: float = 1.0,
        top_k: int = 0,
        top_p: float = 1.0,
        no_repeat_ngram_size: int = 0,
        eos_id: int | None = None,
        seed: int = 0,
    ) -> str:
        """Generate text with every decoding control of this track, and real sampling.

        model: called as model(context) on a (1, T) LongTensor with T <= context_length;
            returns logits of shape (1, T, vocab_size).
        context: the prompt's token ids, a (1, T) LongTensor; T may exceed context_length.
        max_new_tokens: the most tokens to generate (0 or more).
        context_length: the most tokens the model can look at.
        int_to_char: token id -> character.
        temperature: >= 0; 0 means greedy (argmax, first index on ties, no random draw).
        top_k: keep every logit >= the k-th largest; 0 turns it off.
        top_p: keep the most likely tokens, as in problem 10; 1.0 turns it off.
        no_repeat_ngram_size: n for problem 12's ban, over the prompt and every new
            token (not only the model's window); 0 turns it off.
        eos_id: stop when this token is drawn, without adding it; None: never.
        seed: seeds ONE torch.Generator, once, before the loop; it is never rewound.

        Each step: crop to the last context_length tokens, last position's logits, then
        in this order: no-repeat-ngram (stop if every token is banned), temperature
        (divide), top-k, top-p, softmax, torch.multinomial(probs, 1, generator=generator).
        Returns the new text only.
        """
        raise NotImplementedError("write sample_text(): see README.md")
