"""What crosses between the grader and a worker, and nothing else.

Values (encoding.py: tensors, generators, ModelSpec; nothing unpickled), length-prefixed
frames read with limits (frames.py), the replies the grader accepts (replies.py), what a
call printed (printed.py) and the limits both ends run under (limits.py). It stands on
grader.model.spec alone; both sides of the sandbox stand on it.
"""
