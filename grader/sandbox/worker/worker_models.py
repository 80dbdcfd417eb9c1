"""The models a worker hands a submission's calls: built here from their description
(a ModelSpec), given back their pristine weights before each call, with every forward
pass counted; or, for a witnessed call, stand-ins whose passes the grader runs and logs
(grader/sandbox/host/witness.py)."""

from __future__ import annotations

from pathlib import Path
from typing import IO, Any

from grader.locale import tr
from grader.model.spec import ModelSpec
from grader.sandbox.worker.describe import describe_error


class ModelRefused(Exception):
    """A model this worker must not build, such as a trained run the grader serves."""


def weights_changed(model: Any, saved: dict[str, Any]) -> bool:
    """Whether any of the model's weights differ from `saved`.

    The state dict is built once: built again for every weight, it cost about
    3 ms a call, more than most learners' methods take.
    """
    import torch

    current = model.state_dict()
    return any(not torch.equal(value, current[name]) for name, value in saved.items())


class WorkerModels:
    """The models of one worker, and the forward passes its submission's calls made."""

    def __init__(self, policy: Any = None) -> None:
        self.policy = policy  # the sandbox's limits, to name one the learner's GPT reaches
        self.built: dict[tuple, Any] = {}  # by the spec's key: (model, pristine weights)
        self.calls: list[list[int]] = []  # (new tokens, cached tokens) of each pass
        # The grader's witness of model calls, where the worker was given one.
        self.witness: tuple[IO[bytes], IO[bytes]] | None = None

    def materialise(self, value: Any, remote: bool) -> Any:
        """`value`, or the model it describes: a stand-in served by the witness if
        `remote`, else one built here."""
        if not isinstance(value, ModelSpec):
            return value
        return self.remote(value) if remote else self.model(value)

    def changed(self, models: list[Any]) -> bool:
        """Whether the call changed the weights of any of `models` it was handed; what
        such a model remembered answering with other weights is forgotten, so that it
        cannot answer the next call, which model() gives the pristine weights back."""
        pristine = {id(model): saved for model, saved in self.built.values()}
        # Still as known (model() noted them pristine) is a quarter of the time the
        # full comparison takes; a hook added, which that check counts, is no write.
        changed = [m for m in models if id(m) in pristine and not m.weights_as_known()
                   and weights_changed(m, pristine[id(m)])]
        for model in changed:
            model.forget_outputs()
        return bool(changed)

    def remote(self, spec: Any) -> Any:
        """A model whose forward passes run in the grader, which logs them."""
        from grader.sandbox.worker.remote_model import RemoteModel

        assert self.witness is not None
        if spec.kind in ("run", "hidden"):
            # Never built here: its sizes come with its description.
            context_length = spec.config.get("context_length")
            if type(context_length) is not int or context_length < 1:
                raise ModelRefused(f"the description of {spec!r} has no context_length")
            if spec.kind == "hidden":
                self.forget_preloaded()
            config = config_of(spec.config)
        else:
            built = self.model(spec)
            context_length, config = built.context_length, getattr(built, "config", None)
        return RemoteModel(spec, *self.witness, context_length, config)

    def forget_preloaded(self) -> None:
        """Drop every model this process holds, for a worker handed hidden ones
        (grader/model/hidden_weights.py): no copy of the shipped weights the fork server
        loaded stays at hand for the learner's code to compute its text with."""
        from grader.model import artifacts

        artifacts.shipped_model.cache_clear()
        artifacts.shipped_llama.cache_clear()
        self.built.clear()

    def model(self, spec: Any) -> Any:
        from grader.model import forward_store
        from grader.model.artifacts import build_model
        from grader.model.memo import remember_outputs

        if spec.kind in ("run", "hidden"):
            # The run's weights are the grader's to read (the sandbox keeps this
            # process out of the run's folder); the grader serves its forward passes.
            raise ModelRefused(f"{spec!r} is read by the grader only; a worker is "
                               "handed its forward passes (a witnessed call), never its weights")
        key = spec.key()
        if key not in self.built:
            # The learner's code only reads the model: without gradients to track,
            # a forward pass takes about a fifth less time.
            built = self._your_gpt(spec) if spec.kind == "yours" else build_model(spec)
            # A practice grade's kept passes, mapped before the sandbox closed.
            store = forward_store.in_use()
            model = remember_outputs(built.requires_grad_(False),
                                     also=store.lookup(spec) if store is not None else None,
                                     guarded=True)
            self._record_calls(model)
            self.built[key] = (model, {k: v.clone() for k, v in model.state_dict().items()})
        model, pristine = self.built[key]
        # Undo whatever an earlier call did to the weights, so one bad call cannot
        # spoil the next. Weights still bit for bit as noted after the last restore
        # need none: checking costs a fifth of a restore (0.13 ms against 0.66 ms
        # on the shipped GPT), and most calls write nothing.
        if not model.weights_as_known():
            model.load_state_dict(pristine)
            model.weights_known()  # as built: the memo answers until the learner's code writes
        return model

    def _your_gpt(self, spec: Any) -> Any:
        """The learner's problem-23 GPT with the shipped weights (`talk --yours`).

        Whatever their file raises, or a parameter the shipped weights do not
        fit, is the learner's error about that file, not a crash of the worker.
        """
        from grader.model.parts import KnownWeightsError
        from grader.model.yours import build

        try:
            return build(spec)
        except KnownWeightsError as exc:
            raise ModelRefused(str(exc)) from None
        except BaseException as exc:  # noqa: BLE001 - the learner's code, reported as data
            if isinstance(exc, KeyboardInterrupt):
                raise
            error = describe_error(exc, spec.path, self.policy)
            what = tr("modern GPT") if "n_kv_head" in spec.config else "GPT"
            said = dict(what=what, folder=Path(spec.path).parent.name, line=error.get("line"),
                        error=f"{error['type']}: {error['message']}")
            if error.get("line"):
                raise ModelRefused(tr("your {what} in {folder}/solution.py failed (line "
                                      "{line}): {error}", **said)) from None
            raise ModelRefused(tr("your {what} in {folder}/solution.py failed: {error}",
                                  **said)) from None

    def _record_calls(self, model: Any) -> None:
        """Log (new tokens, cached tokens) of every forward pass, as the witness does.

        Recorded before the memo, which answers a window it has seen without a
        pass: the count is of the calls the submission made, as the witness counts
        them where there is one (a fork server's worker), not of the passes run.
        """
        calls = self.calls
        forward = model.forward
        inside = [0]  # GPT.forward runs forward_with_cache: one call, counted once

        def recorded_forward(context: Any) -> Any:
            shape = getattr(context, "shape", ())
            calls.append([int(shape[-1]) if len(shape) else 0, 0])
            inside[0] += 1
            try:
                return forward(context)
            finally:
                inside[0] -= 1

        model.forward = recorded_forward
        inner = getattr(model, "forward_with_cache", None)
        if inner is None:  # the learner's own GPT may have none
            return

        def recorded(context: Any, cache: Any = None) -> Any:
            if not inside[0]:
                past = 0 if not cache else int(cache[0][0].shape[2])
                calls.append([int(context.shape[-1]), past])
            return inner(context, cache)

        model.forward_with_cache = recorded


def config_of(sizes: dict[str, int]) -> Any:
    """The config a model of these sizes carries (a GPT's, or a modern one's with
    n_kv_head), as learner code may read it (model.config); None for sizes of neither."""
    from grader.model.config import GPTConfig, LlamaConfig

    try:
        return (LlamaConfig if "n_kv_head" in sizes else GPTConfig)(**sizes)
    except TypeError:
        return None
