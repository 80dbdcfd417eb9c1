import math  # noqa: F401 - the schedule's cosine, if you write it here

import torch
import torch.nn.functional as F  # noqa: F401 - F.cross_entropy is the loss
from torchtyping import TensorType

# Your earlier solutions can do most of the work (see README.md):
#   from grader.reuse import solution_of
#   Batches = solution_of("batches")          # get_batch, problem 19
#   Schedule = solution_of("lr-schedule")     # learning_rate, problem 27
#   Clip = solution_of("clip-grad-norm")      # clip_grad_norm, problem 28


class Solution:
    def train_loop(
        self, model: torch.nn.Module, optimizer: torch.optim.Optimizer,
        train_data: TensorType["N", int], val_data: TensorType["M", int],
        generator: torch.Generator, eval_generator: torch.Generator,
        steps: int, batch_size: int, context_length: int,
        max_lr: float, min_lr: float, warmup_steps: int, max_norm: float,
        eval_every: int, eval_batches: int,
    ) -> list[tuple[int, float, float]]:
        """Train `model` for `steps` steps and return the log of its evaluations.

        model: a GPT in training mode; optimizer: an AdamW over its parameters.
        train_data, val_data: the training and the validation text, as token ids.
        generator: draws the training batches; eval_generator: the evaluation ones.

        First draw the fixed evaluation batches from eval_generator, with problem
        19's get_batch(data, context_length, batch_size, eval_generator):
        eval_batches of train_data, then eval_batches of val_data. Then, for step
        = 0, 1, ..., steps:
        - if step % eval_every == 0 or step == steps, evaluate: in evaluation mode
          and under torch.no_grad(), the mean of the fixed batches' losses, for
          each text; append (step, train_loss, val_loss) to the log, then go back
          to training mode;
        - if step == steps, stop;
        - set every param group's "lr" to problem 27's
          learning_rate(step, max_lr, min_lr, warmup_steps, steps);
        - draw a batch of train_data with get_batch(..., generator);
        - zero the gradients, compute the loss, backward(), clip the gradients'
          global norm to max_norm (problem 28), optimizer.step().
        Returns the log, a list of (int, float, float).
        """
        raise NotImplementedError("write train_loop(): see README.md")
