"""The sandbox's layers, one module each; `grader.sandbox.worker.isolation` applies them.

On the worker itself: `namespaces` (what the launcher makes, and the real uid),
`rlimits`, `capabilities`, `landlock` (with `readable`, the paths it grants) and
`seccomp`, over `syscalls` (the C library and prctl). On the worker's whole
tree: `cgroups` (memory, process count and CPU time over everything it starts)
and `scratch` (a size-limited tmpfs of the worker's own). `policy`: the Policy the
layers enforce, and the environment a worker runs in.
"""
