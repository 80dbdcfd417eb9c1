"""Sandbox layers that limit a worker's whole process tree, not one process.

`grader.sandbox.isolation` applies them with its own; each module here is one
layer: `cgroups` (memory and process count over the worker and everything it
starts) and `scratch` (a size-limited tmpfs of the worker's own).
"""
