"""What of the grader's own code a worker holds in memory, where no file sandbox can
keep a submission from it: a worker that is handed no model must hold none of the
reference models' code (a learner's attention layer could otherwise hand back the
reference's own, found through sys.modules or torch.nn.Module.__subclasses__())."""

from __future__ import annotations

import sys

# Modules holding the reference models, the checks or the references: a worker that
# is handed no model imports none of them (grader/sandbox/host/forkserver.py's preload).
REFERENCE_MODULES = ("grader.model.gpt", "grader.model.llama", "grader.model.memo",
                     "grader.model.yours", "grader.model.hidden_weights", "grader.checks",
                     "grader.grading", "grader.reports", "grader.release", "grader.learner",
                     "grader.classroom", "grader.cli")


def reference_code_held() -> list[str]:
    """The reference modules in this process, and the torch modules of the grader's
    whose classes are reachable: [] when the worker holds none of them."""
    held = sorted(name for name in sys.modules
                  if any(name == m or name.startswith(f"{m}.") for m in REFERENCE_MODULES))
    torch = sys.modules.get("torch")
    if torch is not None:
        seen: set[type] = set()
        todo = list(torch.nn.Module.__subclasses__())
        while todo:
            cls = todo.pop()
            if cls in seen:
                continue
            seen.add(cls)
            todo += cls.__subclasses__()
            if cls.__module__.startswith("grader."):
                held.append(f"{cls.__module__}.{cls.__qualname__}")
    return held
