"""Drivers for answers that are not a single Solution method call.

They run inside the worker, next to the submission, and return plain data.
A check calls one with `kata.run("harness:<name>", ...)`; the first argument
each receives is the submission's module.
"""

from __future__ import annotations


def greedy_with_fixed_logits(module, logits, new_chars, context, context_length, int_to_char):
    """`greedy()` on a stand-in model whose logits are `logits` at every position.

    Trained models almost never tie exactly; this one ties on purpose, to see
    which of several equally likely tokens a learner's greedy picks.
    """
    import torch

    class FixedLogits(torch.nn.Module):
        def forward(self, context):
            if context.dim() != 2 or context.dtype != torch.long:
                raise ValueError("the model takes token ids as a LongTensor of shape (B, T)")
            if context.shape[1] > context_length:
                raise ValueError(f"the model sees at most context_length={context_length} "
                                 f"tokens, but got {context.shape[1]}")
            return logits.expand(context.shape[0], context.shape[1], -1).clone()

    return module.Solution().greedy(FixedLogits(), new_chars, context, context_length,
                                    int_to_char)


class WordStreamerNotWritten(Exception):
    """The submission's WordStreamer is still the starter's, but its Solution is not."""


def word_streamer(module, int_to_char, pieces):
    """Drive the submission's `WordStreamer`: put() each piece in turn, then end().

    Returns every callback as `(when, text)`, where `when` is the index of the
    put() that was running, or len(pieces) for end(): what came out, and when.
    A WordStreamer still raising NotImplementedError stops the whole problem
    only when stream_generate() is unwritten too; otherwise it is an ordinary
    failure, so that a learner who wrote stream_generate() first is graded on it.
    """
    cls = getattr(module, "WordStreamer", None)
    if cls is None:
        raise AttributeError("there is no class WordStreamer in the submission; "
                             "keep the one the starter defines")
    calls = []
    when = -1

    def callback(text):
        calls.append((when, text))

    try:
        streamer = cls(int_to_char, callback)
        for index, piece in enumerate(pieces):
            when = index  # what the callback records
            streamer.put(piece)
        when = len(pieces)
        streamer.end()
    except NotImplementedError:
        if _unwritten(module, "stream_generate", None, 0, None, 0, {}):
            raise
        raise WordStreamerNotWritten(
            "WordStreamer is not written yet (it still raises NotImplementedError): "
            "write its put() and end(), see README.md") from None
    return calls


def _unwritten(module, method, *args):
    """Whether the submission's Solution.<method> still raises NotImplementedError."""
    try:
        result = getattr(module.Solution(), method)(*args)
        getattr(result, "close", lambda: None)()  # a generator that never started
    except NotImplementedError:
        return True
    except Exception:  # noqa: BLE001 - anything else means it was written
        return False
    return False


def train_steps(module, model, optimizer, x, y):
    """`train_step()` once per batch, on a GPT and an AdamW built here for this call.

    The worker's usual models are shared, frozen and remember their outputs,
    which is right for code that only reads them; a training step changes its
    model, so it gets one of its own, built anew from plain descriptions on
    every call: `model` is {"config": GPTConfig's fields, "seed": int}, and
    `optimizer` holds AdamW's keyword arguments. `x` and `y` are (K, B, T): the
    K batches in order.

    Returns what each step returned (a value the grader cannot carry is
    described in words, so that the judge can name it) and the final weights.
    """
    # An optimizer's first step imports torch._dynamo (hundreds of modules, some
    # seconds): imported here, before the learner's code runs, so that its cost
    # and any failure are the grader's. The fork server does not preload it,
    # since every other problem would pay for it.
    import torch
    import torch._dynamo  # noqa: F401

    from grader.model.artifacts import trainable_model

    net = trainable_model(model["config"], model["seed"])
    adamw = torch.optim.AdamW(net.parameters(), **optimizer)
    solution = module.Solution()
    returned = []
    with torch.enable_grad():  # the grader runs references under no_grad
        for k in range(len(x)):
            value = solution.train_step(net, adamw, x[k].clone(), y[k].clone())
            returned.append(value if isinstance(value, (float, int, torch.Tensor))
                            else f"a {type(value).__name__}")
    return returned, {name: weight.detach().clone() for name, weight in net.state_dict().items()}
