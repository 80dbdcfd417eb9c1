"""Drivers for answers that are not a single Solution method call.

They run inside the worker, next to the submission, and return plain data.
A check calls one with `kata.run("harness:<name>", ...)`; the first argument
each receives is the submission's module.
"""

from __future__ import annotations

# The harnesses that build a torch optimizer, whose construction imports torch._dynamo:
# a problem graded through one says `trains = true` in problems/registry.toml, so that
# the fork server imports it once for all such workers.
TRAINING = frozenset({"train_steps", "train_begin", "train_loop_run", "train_loop_begin"})


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
                            else _a_kind(value))
    return returned, {name: weight.detach().clone() for name, weight in net.state_dict().items()}


def loss_backward(module, logits, targets):
    """`loss()` on logits that require gradients, then its gradient with respect to them.

    Returns the loss (detached) and the logits' gradient, or None for the gradient
    when the loss has no graph back to the logits (.detach(), .item(), no_grad):
    what training's loss.backward() would find. A loss that is not a one-element
    tensor is returned as it is, for the value checks to describe.
    """
    import torch

    leaf = logits.detach().clone().requires_grad_(True)
    with torch.enable_grad():  # the grader runs references under no_grad
        loss = module.Solution().loss(leaf, targets.clone())
        if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
            return loss, None
        if not loss.requires_grad:
            return loss.detach(), None
        (gradient,) = torch.autograd.grad(loss.sum(), leaf, allow_unused=True)
    return loss.detach(), gradient



def adamw_update(module, params, grads, exp_avgs, exp_avg_sqs, step, lr, betas, eps,
                 weight_decay):
    """`adamw_step()` on copies of its tensors, so that an update made in place and
    one that returns new tensors are graded alike (the caller's inputs stay as they
    were). Returns what it returned, a sequence of three sequences made a tuple of
    three lists, so that a learner's tuple and list compare equal."""
    copies = [[t.clone() for t in tensors] for tensors in (params, grads, exp_avgs,
                                                            exp_avg_sqs)]
    result = module.Solution().adamw_step(*copies, step, lr, betas, eps, weight_decay)
    if (isinstance(result, (list, tuple)) and len(result) == 3
            and all(isinstance(part, (list, tuple)) for part in result)):
        return tuple(list(part) for part in result)
    return result


def clip_gradients(module, parameters, max_norm):
    """`clip_grad_norm()` on parameters built here: `parameters` describes them by
    their gradients (None for a parameter that has none), since a tensor's .grad
    does not cross the worker's pipe. Returns what it returned and every
    parameter's gradient after the call (None where there was none)."""
    import torch

    built = []
    for grad in parameters:
        weight = torch.nn.Parameter(torch.zeros(grad.shape if grad is not None else (2,),
                                                dtype=grad.dtype if grad is not None
                                                else torch.float32))
        weight.grad = None if grad is None else grad.clone()
        built.append(weight)
    total = module.Solution().clip_grad_norm(built, max_norm)
    if isinstance(total, torch.Tensor):
        total = total.detach().clone()
    return total, [None if w.grad is None else w.grad.detach().clone() for w in built]


# -- gpt-kata train --yours ------------------------------------------------------------
# A training run spans many calls to one worker: the learner's GPT, its optimizer
# and the batch generator live here between them, so that the grader can show
# progress and end a run that stops answering after every chunk of steps.
_RUN: dict = {}


def _learner_module(path, name):
    """A learner's earlier solution file, imported inside the worker only."""
    import importlib.util
    import sys

    from grader.reuse import source_spec

    spec = source_spec(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[name] = loaded  # dataclasses look their module up while it runs
    spec.loader.exec_module(loaded)
    return loaded


def _learner_net(gpt_file, config, seed):
    """The learner's GPT (problem 23), or with a config that has n_kv_head their modern
    GPT (problem 35, class Llama), in training mode with the seeded weights `gpt-kata
    train` starts from. Any initialisation of the learner's passes: the weights are
    loaded by the statement's names, so a misnamed parameter is refused here, before
    the first step."""
    import torch

    from grader.model.parts import config_from, load_known_weights
    from grader.model.yours import initial_model, is_modern

    name = "Llama" if is_modern(config) else "GPT"
    cls = getattr(_learner_module(gpt_file, "kata_train_gpt"), name, None)
    if not isinstance(cls, type):
        raise ImportError(f"there is no class {name} in {gpt_file}")
    net = cls(config_from(config))
    if not isinstance(net, torch.nn.Module):
        raise TypeError(f"{name} is not a torch.nn.Module")
    load_known_weights(net, initial_model(config, seed).state_dict(), name)
    return net.train()


def train_begin(module, gpt_file, batches_file, config, seed, train_data, val_data,
                batch_size, optimizer, threads):
    """Build the learner's GPT (problem 23, or their modern GPT: `_learner_net`) with the
    seeded weights `train` starts from,
    an AdamW with `optimizer`'s keyword arguments and a batch generator seeded with
    `seed`; `module` is the learner's train_step (problem 25). Returns the losses
    before the first step, as `train_evaluate` gives them."""
    import torch
    import torch._dynamo  # noqa: F401 - see train_steps: the grader pays for it, not step 1

    torch.set_num_threads(threads)
    net = _learner_net(gpt_file, config, seed)
    batches = getattr(_learner_module(batches_file, "kata_train_batches"), "Solution", None)
    if not isinstance(batches, type):
        raise ImportError(f"there is no class Solution in {batches_file}")
    _RUN.clear()
    _RUN.update(net=net, optimizer=torch.optim.AdamW(net.parameters(), **optimizer),
                generator=torch.Generator().manual_seed(seed), train=train_data,
                val=val_data, batch_size=batch_size, context_length=config["context_length"],
                get_batch=batches().get_batch, train_step=module.Solution().train_step)
    return train_evaluate(module)


def train_chunk(module, learning_rates, evaluate):
    """One step per learning rate: the learner's get_batch, then their train_step.

    Returns the loss each train_step returned, then the evaluation after them
    if `evaluate`, else None.
    """
    import math

    import torch

    run = _RUN
    losses = []
    with torch.enable_grad():
        for rate in learning_rates:
            for group in run["optimizer"].param_groups:
                group["lr"] = rate  # the schedule is the grader's, as in `train`
            x, y = run["get_batch"](run["train"], run["context_length"], run["batch_size"],
                                    run["generator"])
            # A passing get_batch may return views (rows[:, 1:] of unfolded windows),
            # and a passing train_step may .view() them, as problem 25's cases, made
            # contiguous, allow: the batch is handed over as those cases hand it.
            x, y = (t.contiguous() if isinstance(t, torch.Tensor) else t for t in (x, y))
            value = run["train_step"](run["net"], run["optimizer"], x, y)
            if isinstance(value, torch.Tensor) and value.numel() == 1:
                value = value.item()
            if not isinstance(value, (float, int)) or isinstance(value, bool):
                raise TypeError(f"train_step() returned {_a_kind(value)}; "
                                "return the loss as a float (loss.item())")
            if not math.isfinite(value):
                raise ValueError(f"train_step() returned a loss of {value}: training "
                                 "diverged")
            losses.append(float(value))
    return losses, train_evaluate(module) if evaluate else None


def train_evaluate(module):
    """Mean loss on fixed windows of the training and the validation text, drawn as
    `gpt-kata train` draws them, so that its curve and this one compare."""
    import torch
    import torch.nn.functional as F

    run = _RUN
    net, length = run["net"], run["context_length"]
    net.eval()
    means = []
    with torch.no_grad():
        for data in (run["train"], run["val"]):
            # grader/model/training.py's estimate_loss, which the worker cannot import
            g = torch.Generator().manual_seed(1)
            losses = []
            for _ in range(8):
                starts = torch.randint(len(data) - length - 1, (64,), generator=g).tolist()
                x = torch.stack([data[s : s + length] for s in starts])
                y = torch.stack([data[s + 1 : s + length + 1] for s in starts])
                losses.append(F.cross_entropy(net(x).flatten(0, 1), y.flatten()).item())
            means.append(sum(losses) / len(losses))
    net.train()
    return means


def train_weights(module):
    """The trained weights by name, for the grader to check and write: the
    parameters only, since a buffer (a causal mask kept with register_buffer) is
    the learner's own, as in grading (grader/model/parts.py)."""
    return {name: w.detach().clone() for name, w in _RUN["net"].named_parameters()}


# The param groups an optimizer's description may ask for as its "groups", besides
# one group of every parameter: nanoGPT's two (its configure_optimizers: weight decay
# on the matrices, none on the biases and LayerNorm weights), or one per parameter.
NANOGPT_GROUPS = "two, as nanoGPT's: the matrices with weight_decay, the rest without"
GROUP_PER_PARAMETER = "one per parameter"


def adamw_in_groups(net, optimizer):
    """An AdamW over `net`'s parameters with `optimizer`'s keyword arguments, in the
    param groups its "groups" names (one group when it names none)."""
    import torch

    settings = dict(optimizer)
    groups = settings.pop("groups", None)
    params = list(net.parameters())
    if groups == NANOGPT_GROUPS:
        params = [{"params": [p for p in params if p.dim() >= 2],
                   "weight_decay": settings.get("weight_decay", 0.01)},
                  {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
    elif groups == GROUP_PER_PARAMETER:
        params = [{"params": [p]} for p in params]
    elif groups is not None:
        raise ValueError(f"no param groups {groups!r}")
    return torch.optim.AdamW(params, **settings)


def train_loop_run(module, model, optimizer, train_data, val_data, generator, eval_generator,
                   steps, batch_size, context_length, max_lr, min_lr, warmup_steps, max_norm,
                   eval_every, eval_batches):
    """`train_loop()` on a GPT and an AdamW built here for this call, as `train_steps`
    builds them (`model` and `optimizer` are their descriptions; the optimizer's may
    ask for several param groups, `adamw_in_groups`); the other arguments are the
    loop's own.

    Every forward pass of the model is counted by whether gradients were on and
    whether the model was in training mode: what the losses and the weights do not
    show (an evaluation that builds a graph, steps taken in evaluation mode). Each
    optimizer.step() records the rate of every param group as the step reads it: a
    loop's own schedule, if wrong, shows there first. Returns the log as the loop
    returned or yielded it (each entry a tuple, or described in words), the final
    weights, those counts and those rates.
    """
    import torch
    import torch._dynamo  # noqa: F401 - see train_steps

    from grader.model.artifacts import trainable_model

    net = trainable_model(model["config"], model["seed"])
    adamw = adamw_in_groups(net, optimizer)
    modes = {"grad, train": 0, "grad, eval": 0, "no grad, train": 0, "no grad, eval": 0}
    forward = net.forward

    def counted(*args, **kwargs):
        grad = "grad" if torch.is_grad_enabled() else "no grad"
        modes[f"{grad}, {'train' if net.training else 'eval'}"] += 1
        return forward(*args, **kwargs)

    net.forward = counted  # an instance attribute: model(x) and model.forward(x) both count
    rates = []

    def recorded(optimizer, args, kwargs):
        # A rate may be a float or a one-element tensor; anything else is no rate.
        try:
            rates.append(tuple(float(group["lr"]) for group in optimizer.param_groups))
        except (TypeError, ValueError, RuntimeError):
            rates.append(())

    adamw.register_step_pre_hook(recorded)
    with torch.enable_grad():  # the grader runs references under no_grad
        result = module.Solution().train_loop(
            net, adamw, train_data.clone(), val_data.clone(), generator, eval_generator,
            steps, batch_size, context_length, max_lr, min_lr, warmup_steps, max_norm,
            eval_every, eval_batches)
        if isinstance(result, (str, bytes, dict, torch.Tensor)) or not hasattr(result,
                                                                                "__iter__"):
            log = _a_kind(result)
        else:  # a list, or a generator that yields each evaluation: both are a log
            log = [tuple(v.detach().clone() if isinstance(v, torch.Tensor) else v
                         for v in entry) if isinstance(entry, (list, tuple))
                   else _a_kind(entry) for entry in result]
    weights = {name: w.detach().clone() for name, w in net.state_dict().items()}
    return log, weights, modes, rates


class _Watch:
    """A learner's loop watched while it runs in a thread of the worker: the optimizer's
    steps (a hook on its step()) and the model's evaluations (forward passes without
    gradients or in evaluation mode, up to the next training pass), as they happen,
    whether the loop yields its log or returns it.

    Every `stride` steps the loop waits until `train_loop_progress` has reported them,
    so that the grader hears of each stride of steps, however busy the machine."""

    def __init__(self, steps):
        import threading

        self.changed = threading.Condition()
        self.stride = max(1, steps // 50)  # at least 50 reports a run
        self.steps = 0  # optimizer steps taken
        self.reported = 0  # steps at the last report
        self.evaluating = None  # the step of the evaluation under way
        self.evaluated = []  # steps of the evaluations that ended, not reported yet
        self.log = []  # log entries that came out of the loop, not reported yet
        self.done = False
        self.error = None

    def _evaluation_ends(self):
        if self.evaluating is not None:
            self.evaluated.append(self.evaluating)
            self.evaluating = None
            self.changed.notify_all()

    def forward(self, training):
        with self.changed:
            if not training and self.evaluating is None:
                self.evaluating = self.steps
            elif training:
                self._evaluation_ends()

    def stepped(self, *_):
        with self.changed:
            self._evaluation_ends()
            self.steps += 1
            if self.steps - self.reported >= self.stride:
                self.changed.notify_all()
                self.changed.wait_for(lambda: self.reported == self.steps or self.done)

    def logged(self, entry):
        with self.changed:
            self._evaluation_ends()
            self.log.append(entry)
            self.changed.notify_all()

    def end(self, error=None):
        with self.changed:
            self._evaluation_ends()
            self.error, self.done = error, True
            self.changed.notify_all()

    def news(self):
        return (self.done or self.evaluated or self.log
                or self.steps - self.reported >= self.stride)

    def report(self):
        """What happened since the last report, once something has."""
        with self.changed:
            self.changed.wait_for(self.news)
            said = {"steps": self.steps, "evaluated": self.evaluated, "log": self.log,
                    "done": self.done}
            self.evaluated, self.log, self.reported = [], [], self.steps
            self.changed.notify_all()
            return said


def _a_kind(value) -> str:
    """What `value` is, in words the grader shows as they are: "an int", "a dict".
    grader/wording.py's article() says the same (tests/test_wording.py holds them
    alike), but a driver the learners' copy is written with imports none of the
    grader (grader/release/sources.py)."""
    if value is None:
        return "None (is a return statement missing?)"
    kind = type(value).__name__
    vowel = kind[:1].lower() in "aeio" or kind.startswith("ndarray")
    return f"{'an' if vowel else 'a'} {kind}"


def _log_entry(entry):
    """A log entry as the grader reads it: a tuple with tensors of one value as numbers,
    or what it is, in words."""
    import torch

    if not isinstance(entry, (list, tuple)):
        return _a_kind(entry)
    return tuple(v.item() if isinstance(v, torch.Tensor) and v.numel() == 1 else v
                 for v in entry)


def train_loop_begin(module, gpt_file, config, seed, train_data, val_data, arguments, threads):
    """`gpt-kata train --yours` with the learner's loop (problem 30, `module`): their GPT
    (problem 23, or their modern GPT: `_learner_net`) built with the seeded weights
    `train` starts from, an AdamW with `arguments["optimizer"]`'s keyword arguments,
    and train_loop() called with the rest of `arguments` (steps, batch_size, ...), a
    training generator seeded with `seed` and an evaluation generator seeded with 1,
    as `train` evaluates. The loop runs in a thread of its own, watched (`_Watch`);
    `train_loop_progress` then says what it has done, as it does it."""
    import threading

    import torch
    import torch._dynamo  # noqa: F401 - see train_steps

    torch.set_num_threads(threads)
    net = _learner_net(gpt_file, config, seed)
    settings = dict(arguments)
    adamw = torch.optim.AdamW(net.parameters(), **settings.pop("optimizer"))
    watch = _Watch(settings["steps"])
    forward = net.forward

    def watched(*args, **kwargs):
        watch.forward(torch.is_grad_enabled() and net.training)
        return forward(*args, **kwargs)

    net.forward = watched  # an instance attribute: model(x) and model.forward(x) both count
    adamw.register_step_post_hook(watch.stepped)
    loop = module.Solution().train_loop

    def run():
        try:
            with torch.enable_grad():
                result = loop(net, adamw, train_data, val_data,
                              torch.Generator().manual_seed(seed),
                              torch.Generator().manual_seed(1), **settings)
                if isinstance(result, (str, bytes, dict, torch.Tensor)) or not hasattr(
                        result, "__iter__"):
                    raise TypeError(f"train_loop() returned {_a_kind(result)}, "
                                    "not its log")
                for entry in result:  # a generator's steps run here, between its entries
                    watch.logged(_log_entry(entry))
        except BaseException as exc:  # noqa: BLE001 - reported by train_loop_progress
            watch.end(exc)
            return
        watch.end()

    _RUN.clear()
    _RUN.update(net=net, watch=watch,
                thread=threading.Thread(target=run, name="train_loop", daemon=True))
    _RUN["thread"].start()


def train_loop_progress(module):
    """What the loop `train_loop_begin` started has done since the last call, once it has
    done something: the optimizer steps taken so far, the steps at which evaluations
    ended, the log entries that came out (each as a tuple), and whether the loop is
    done. An error of the loop is raised here."""
    watch = _RUN["watch"]
    said = watch.report()
    if said["done"]:
        _RUN["thread"].join()
        if watch.error is not None:
            raise watch.error
    return said


# -- gpt-kata talk --model RUN --yours -----------------------------------------------


def take_weights(module, tensors):
    """Keep a run's weights in this worker, for the learner's GPT to be built with
    (grader/model/yours.py); their handle, made here, for the grader to compare with its
    own. The worker cannot read the run's folder: the grader hands it the weights."""
    from grader.model.yours import hand

    return hand(tensors)
