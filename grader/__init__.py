"""gpt-kata: a graded kata for learning how GPT text generation works."""

__version__ = "0.1.0"
