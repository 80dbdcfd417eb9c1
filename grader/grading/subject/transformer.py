"""The GPT and its parts with one knob per known mistake, for the checks of the
attention head, the attention layer, the block and the GPT.

A mistake is diagnosed by running it on the learner's arguments, so each is the
right computation with one thing changed, written once here. The weights come
from the same description the learner's module was loaded from.
"""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn.functional as F

from grader.model import parts


def attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, diagonal: int | None = 0,
           scale: str | float = "sqrt", softmax_dim: int = -1,
           mask_after_softmax: bool = False, fill: float = float("-inf"),
           triangle: str = "lower", keys: str = "last-two") -> torch.Tensor:
    """softmax(q k^T / sqrt(head_size), masked) v, over the last two dimensions.

    `diagonal` is the mask's: 0 lets query t see keys up to t, 1 one key more,
    -1 not even its own; None is no mask. `scale` is "sqrt", "size", "none",
    "times-sqrt" (multiplied by sqrt(head_size), the exponent's sign slipped), "time"
    (divided by sqrt(T), the keys' size(1) taken for their width) or the number to
    divide by. `fill` is what the masked scores become (0 is the mistake
    of masking with 0, or of multiplying by the triangle), and `triangle` "upper"
    lets each query see the keys after it instead (torch.triu for torch.tril).
    `keys="all"` turns k as k.T does on more than two dimensions: every dimension
    reversed, not the last two swapped (written as the permute k.T is, which torch
    does without warning that k.T on such a tensor is deprecated).
    """
    T, size = q.shape[-2], q.shape[-1]
    turned = k.transpose(-2, -1) if keys == "last-two" else k.permute(*reversed(range(k.dim())))
    scores = q @ turned
    if isinstance(scale, str):
        scale = {"sqrt": math.sqrt(size), "size": size, "none": 1.0,
                 "times-sqrt": 1 / math.sqrt(size), "time": math.sqrt(T)}[scale]
    scores = scores / scale
    if diagonal is None:
        return F.softmax(scores, dim=softmax_dim) @ v
    ones = torch.ones(T, T, dtype=torch.bool)
    allowed = ones.tril(diagonal) if triangle == "lower" else ones.triu(-diagonal)
    if mask_after_softmax:
        return F.softmax(scores, dim=softmax_dim).masked_fill(~allowed, 0.0) @ v
    return F.softmax(scores.masked_fill(~allowed, fill), dim=softmax_dim) @ v


def head(config: dict[str, int], weights: dict[str, Any], x: torch.Tensor,
         **knobs: Any) -> torch.Tensor:
    """One attention head (problem attention-head), made with `knobs` (see attend);
    `scale="embd"` divides by sqrt(n_embd), the width of x."""
    w = parts.state_dict(weights)
    if knobs.get("scale") == "embd":
        knobs["scale"] = math.sqrt(x.shape[-1])
    q, k, v = (F.linear(x, w[f"{name}.weight"], w[f"{name}.bias"])
               for name in ("query", "key", "value"))
    return attend(q, k, v, **knobs)


def attention(config: dict[str, int], weights: dict[str, Any], x: torch.Tensor,
              **knobs: Any) -> torch.Tensor:
    """The attention layer (problem multi-head-attention), made with `knobs` (see layer)."""
    return layer(parts.state_dict(weights), config["n_head"], x, **knobs)


def layer(w: dict[str, torch.Tensor], n_head: int, x: torch.Tensor, *, split: str = "heads",
          merge: str = "heads", project: bool = True, order: str = "qkv",
          per_head: bool = False, loop: bool = False, **knobs: Any) -> torch.Tensor:
    """An attention layer with the weights `w` (qkv, proj).

    `split="time"` views (B, T, C) as (B, n_head, T, head_size) directly, which
    cuts the sequence, not the channels, into heads; `merge="time"` joins the
    heads' outputs back the same wrong way, `merge="channels"` interleaves them
    (channel c of every head, then c + 1); `scale="embd"` divides by sqrt(C);
    `order` names what the three thirds of qkv's output are taken as ("kqv":
    the first third as the keys, the second as the queries); `per_head` reads
    qkv's output head by head, each head's q, k and v side by side (as some
    libraries lay out their fused weights), not as three thirds. `scale="heads"`
    divides by sqrt(n_head), the size(1) of k once it is (B, n_head, T, head_size).
    `loop` attends head by head on each one's (B, T, head_size) slice of the channels
    and joins the outputs along them, as a loop over the heads does (the same output,
    but k.T, `keys="all"`, reverses a 3-d slice and raises its own error); it reads
    qkv as three thirds and keeps each head's channels, so it takes no layout knob.
    """
    if loop and (split, merge, per_head) != ("heads", "heads", False):
        raise ValueError("loop attends head by head: split, merge and per_head do not apply")
    B, T, C = x.shape
    if knobs.get("scale") == "embd":
        knobs["scale"] = math.sqrt(C)
    elif knobs.get("scale") == "heads":
        knobs["scale"] = math.sqrt(n_head)
    size = C // n_head
    out = F.linear(x, w["qkv.weight"], w["qkv.bias"])
    if per_head:
        parts_of = out.view(B, T, n_head, 3 * size).transpose(1, 2).split(size, dim=3)
        q, k, v = (dict(zip(order, parts_of))[name] for name in "qkv")
    else:
        thirds = dict(zip(order, out.split(C, dim=2)))
        q, k, v = thirds["q"], thirds["k"], thirds["v"]
        if loop:
            y = torch.cat([attend(*(t[..., h * size:(h + 1) * size] for t in (q, k, v)), **knobs)
                           for h in range(n_head)], dim=-1)
            return F.linear(y, w["proj.weight"], w["proj.bias"]) if project else y
        if split == "heads":
            q, k, v = (t.view(B, T, n_head, size).transpose(1, 2) for t in (q, k, v))
        else:
            q, k, v = (t.reshape(B, n_head, T, size) for t in (q, k, v))
    y = attend(q, k, v, **knobs)
    if merge == "heads":
        y = y.transpose(1, 2).reshape(B, T, C)
    elif merge == "channels":
        y = y.permute(0, 2, 3, 1).reshape(B, T, C)
    else:
        y = y.reshape(B, T, C)
    return F.linear(y, w["proj.weight"], w["proj.bias"]) if project else y


def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, *,
               eps: float = 1e-5, unbiased: bool = False) -> torch.Tensor:
    """LayerNorm over the last dimension; `unbiased` divides the variance by n - 1
    (torch.var's default) instead of n, as a LayerNorm written by hand may."""
    if not unbiased:
        return F.layer_norm(x, (x.shape[-1],), weight, bias, eps=eps)
    mean = x.mean(dim=-1, keepdim=True)
    var = x.var(dim=-1, keepdim=True, unbiased=True)
    return (x - mean) / torch.sqrt(var + eps) * weight + bias


def block(config: dict[str, int], weights: dict[str, Any], x: torch.Tensor, *,
          norm: str = "pre", residual: tuple[str, ...] = ("attn", "mlp"),
          activation: str = "gelu", swap_norms: bool = False, eps: float = 1e-5,
          unbiased: bool = False, norms: str = "each", normed: tuple[str, ...] = (),
          parallel: bool = False, **knobs: Any) -> torch.Tensor:
    """A transformer block (problem transformer-block), with one knob per mistake.

    `norm="post"` normalises after each residual sum (the original
    transformer's order) instead of before each sub-layer; `residual` names the
    sub-layers whose input is added back; `activation` is "gelu", "tanh" (GELU's
    tanh approximation), "relu" or "none" (no activation: two linear layers in a row);
    `swap_norms` uses ln_2 before the attention
    and ln_1 before the MLP, `norms="first"` ln_1 before both; `normed` names the
    sub-layers whose output is added to the normalised x they read, not to x; `eps` and
    `unbiased` are the LayerNorms' (see layer_norm); `parallel` lets the MLP read the
    block's input, as the attention does, instead of x after the attention's sum
    (x + attn(ln_1(x)) + mlp(ln_2(x))). Other `knobs` go to the attention layer (see
    layer).
    """
    w = parts.state_dict(weights)
    ln_1, ln_2 = ("ln_2", "ln_1") if swap_norms else ("ln_1", "ln_2")
    if norms == "first":
        ln_2 = ln_1

    def norm_of(name: str, t: torch.Tensor) -> torch.Tensor:
        return layer_norm(t, w[f"{name}.weight"], w[f"{name}.bias"], eps=eps,
                          unbiased=unbiased)

    def attend_all(t: torch.Tensor) -> torch.Tensor:
        inner = {k.removeprefix("attn."): v for k, v in w.items() if k.startswith("attn.")}
        return layer(inner, config["n_head"], t, **knobs)

    def mlp(t: torch.Tensor) -> torch.Tensor:
        hidden = F.linear(t, w["mlp.fc.weight"], w["mlp.fc.bias"])
        hidden = {"gelu": F.gelu, "relu": F.relu, "none": lambda h: h,
                  "tanh": lambda h: F.gelu(h, approximate="tanh")}[activation](hidden)
        return F.linear(hidden, w["mlp.proj.weight"], w["mlp.proj.bias"])

    block_input = x
    for name, sub, ln in (("attn", attend_all, ln_1), ("mlp", mlp, ln_2)):
        if norm == "pre":
            read = norm_of(ln, block_input if parallel else x)
            keep = (read if name in normed else x) if name in residual else 0
            x = keep + sub(read)
        else:
            x = norm_of(ln, (x if name in residual else 0) + sub(x))
    return x


def gpt(config: dict[str, int], weights: dict[str, Any], context: torch.Tensor, *,
        positions: bool | str = True, final_norm: bool = True, softmax: bool = False,
        **knobs: Any) -> torch.Tensor:
    """The GPT (problem gpt), with one knob per mistake; other `knobs` go to every
    block (see block), and `eps` and `unbiased` to the final LayerNorm too.

    `positions` False leaves the position embeddings out; "last" adds the
    table's last T rows (positions counted from the end of the table),
    "reversed" rows T-1 down to 0 (counted from the end of the window), "tokens" the
    rows of the token ids (the table looked up with the context, not the positions),
    "from one" rows 1 to T (torch.arange(1, T + 1)), looked up as an nn.Embedding
    does, so that a full window asks for a row past the table and raises as it does.
    """
    w = parts.state_dict(weights)
    T = context.shape[1]
    x = F.embedding(context, w["token_embedding.weight"])
    table = w["position_embedding.weight"]
    if positions is True:
        x = x + table[:T]
    elif positions == "last":
        x = x + table[table.shape[0] - T:]
    elif positions == "reversed":
        x = x + table[:T].flip(0)
    elif positions == "tokens":
        x = x + F.embedding(context, table)
    elif positions == "from one":
        x = x + F.embedding(torch.arange(1, T + 1), table)
    for i in range(config["n_layer"]):
        x = block(config, {**weights, "part": _join(weights["part"], f"blocks.{i}")}, x, **knobs)
    if final_norm:
        x = layer_norm(x, w["ln_f.weight"], w["ln_f.bias"], eps=knobs.get("eps", 1e-5),
                       unbiased=knobs.get("unbiased", False))
    logits = F.linear(x, w["head.weight"])
    return F.softmax(logits, dim=-1) if softmax else logits


def _join(part: str, child: str) -> str:
    return f"{part}.{child}" if part else child
