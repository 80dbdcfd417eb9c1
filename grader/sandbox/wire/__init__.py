"""What crosses between the grader and a worker, and nothing else.

Values (encoding.py: tensors, generators, ModelSpec, as msgspec structs; nothing
unpickled), length-prefixed msgpack frames read with limits (frames.py), the replies the
grader accepts, held to structs of their own (replies.py), what a call printed
(printed.py) and the limits both ends run under (limits.py). Of the grader it stands on
grader.model.spec alone; both sides of the sandbox stand on it.
"""
