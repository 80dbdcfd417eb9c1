"""The site's pictures: drawn at each build by the project's own code.

Three diagrams are hand-written SVG in docs/pages/pictures/ (the model, the
generation loop, the KV cache), in English. Their Chinese twins, NAME.zh.svg beside
them (ignored by git), are written here from them, each label translated by the
kata's catalogs (grader/locale/zh/pictures.po); the i18n plugin shows a page of the
Chinese site the twin of each picture it names. The rest are drawn here, into
pages/figures/ (ignored by git), from the shipped model and the project's commands,
so that they show what the code does today, each a second time in Chinese
(NAME.zh.png) where a font that holds Chinese is installed:

- the attention mask, and the weights one head of the shipped GPT gives;
- the sampling filters: the shipped GPT's next-character probabilities, and
  what top-k and top-p keep of them;
- a trace: `gpt-kata trace --plot` on a learner-style submission of problem 06
  (grader/checks/<slug>/examples/), its picture and its report;
- a loss curve: the loss log of a `gpt-kata train` run with the shipped GPT's
  settings (docs/data/loss_log.tsv), drawn by `gpt-kata train`'s own plot_losses.

Nothing is trained or downloaded; the trace takes a few seconds.
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = "figures"
# The loss log of `gpt-kata train --out DIR`, the shipped GPT's settings (3000 steps,
# seed 0, 2 threads), run on a busy 2-core machine on 2 December 2026 (19 minutes).
# Its weights are not the shipped ones bit for bit, but its last validation loss,
# 0.5726, is within 0.001 of theirs (estimate_loss: 0.5721).
LOSS_LOG = ROOT / "docs" / "data" / "loss_log.tsv"
# The prompt of the attention and sampling pictures, as in the statements.
PROMPT = "Once upon a time, there was a "
ATTENTION_PROMPT = "Once upon a time,"
TOP_K, TOP_P = 5, 0.9
# The learner-style submission traced: it crops the wrong end of the context. It is a
# known mistake of the problem's examples (grader/checks/generate/examples/), a patch
# of their base, written out by tests/learner_examples.py to be traced.
TRACED = ("generate", "crop_first")
EXAMPLES = ROOT / "grader" / "checks" / "generate" / "examples"
PLOT = "trace-crop-first.png"

# Each picture, as the statements show it (the path is relative to a statement's
# page, pages/problems/NN-slug/index.md).
PICTURE = {
    "model": ("../../pictures/model.svg", "The shipped GPT, from token ids to logits"),
    "loop": ("../../pictures/generation-loop.svg", "The generation loop, step by step"),
    "kv-cache": ("../../pictures/kv-cache.svg", "What each step feeds the model, "
                 "without and with a KV cache"),
    "attention": (f"../../{OUT}/attention-mask.png", "The causal mask, and the weights "
                  "one head of the shipped GPT gives"),
    "filters": (f"../../{OUT}/sampling-filters.png", "The shipped GPT's next-character "
                "probabilities, and what top-k and top-p keep"),
    "trace": (f"../../{OUT}/trace-crop-first.png", "gpt-kata trace generate --plot "
              "trace.png on a generate() that keeps the wrong end of the context"),
    "loss": (f"../../{OUT}/loss-curve.png", "The losses of a GPT trained as the shipped "
             "one was"),
}
# The pictures each problem's statement page shows, before its first section.
PROBLEM_PICTURES = {
    "crop-context": ["loop"],
    "last-logits": ["model"],
    "sample": ["filters"],
    "generate": ["loop", "trace"],
    "temperature": ["filters"],
    "top-k": ["filters"],
    "top-p": ["filters"],
    "top-k-top-p": ["filters"],
    "kv-cache": ["kv-cache"],
    "sampler": ["loop", "filters"],
    "attention-head": ["attention"],
    "multi-head-attention": ["attention"],
    "transformer-block": ["model"],
    "gpt": ["model"],
    "loss": ["loss"],
    "train-step": ["loss"],
    "lr-schedule": ["loss"],
    "train-loop": ["loss"],
    "grouped-query-attention": ["kv-cache", "attention"],
}


# The captions on the Chinese site (the pictures are the same).
CAPTIONS_ZH = {
    "model": "随附的 GPT：从 token id 到 logits",
    "loop": "生成循环，一步一步",
    "kv-cache": "每一步喂给模型的内容：不用与使用 KV 缓存",
    "attention": "因果掩码，以及随附 GPT 的一个注意力头给出的权重",
    "filters": "随附 GPT 对下一个字符的概率，以及 top-k 和 top-p 保留的部分",
    "trace": ("对一个保留了上下文错误一端的 generate() 运行 "
              "gpt-kata trace generate --plot trace.png"),
    "loss": "按随附模型的方式训练的 GPT 的损失",
}


def markdown(name: str, language: str = "en") -> str:
    path, caption = PICTURE[name]
    if language == "zh":
        caption = CAPTIONS_ZH[name]
    return f"![{caption}]({path})\n/// caption\n{caption}\n///\n"


def pictures_in(language: str) -> dict[str, list[str]]:
    """The pictures of each problem's page, as markdown with captions in `language`."""
    return {slug: [markdown(name, language) for name in names]
            for slug, names in PROBLEM_PICTURES.items()}


def pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


@contextmanager
def speaking(language: str) -> Iterator[None]:
    """The kata in `language` (what `--lang` sets) and matplotlib in a font that draws
    it, in this process for the while; both put back after."""
    from grader.locale import SETTING
    from grader.locale.fonts import use_cjk_fonts

    plt = pyplot()
    before = os.environ.get(SETTING)
    os.environ[SETTING] = language
    try:
        with plt.rc_context():
            if language != "en":
                use_cjk_fonts(plt)
            yield
    finally:
        if before is None:
            os.environ.pop(SETTING, None)
        else:
            os.environ[SETTING] = before


def in_chinese(draw: Callable[[Path], None]) -> Callable[[Path], None]:
    """`draw` in Chinese, where a font that holds Chinese is installed: elsewhere it
    draws nothing, and the Chinese pages show the English picture."""
    def drawn(path: Path) -> None:
        if cjk_font():
            with speaking("zh"):
                draw(path)
    return drawn


def shown(c: str) -> str:
    return {" ": "␣", "\n": "\\n"}.get(c, c)


def attention(path: Path) -> None:
    """The causal mask, and the attention weights of the shipped GPT's first layer,
    head 0 (as the statements count them), on the prompt: computed as
    grader/model/gpt.py computes them."""
    import math

    import torch

    from grader.locale import tr
    from grader.model.artifacts import encode, shipped_model, shipped_vocab
    from grader.model.gpt import causal_mask

    model, vocab = shipped_model(), shipped_vocab()
    ids = encode(ATTENTION_PROMPT, vocab)
    T = ids.shape[1]
    with torch.no_grad():
        x = model.token_embedding(ids) + model.position_embedding(torch.arange(T))
        block = model.blocks[0]
        C, heads = x.shape[-1], block.attn.n_head
        q, k, _ = block.attn.qkv(block.ln_1(x)).view(1, T, 3, heads, C // heads).permute(
            2, 0, 3, 1, 4)
        mask = causal_mask(T, T, x.device)
        scores = q @ k.transpose(-2, -1) / math.sqrt(C // heads) + mask
        weights = torch.softmax(scores, dim=-1)[0, 0]
    labels = [shown(c) for c in ATTENTION_PROMPT]
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 5.2), dpi=100)
    allowed = (mask == 0).float()
    axes[0].imshow(allowed, cmap="Blues", vmin=0, vmax=1.4)
    axes[0].set_title(tr("the mask: query i sees keys 0..i (blue);\n"
                         "the rest get -inf before the softmax"))
    image = axes[1].imshow(weights, cmap="viridis", vmin=0, vmax=1)
    axes[1].set_title(tr("the shipped GPT, first layer, head 0: softmax of\n"
                         "the masked scores, each row sums to 1"))
    fig.colorbar(image, ax=axes[1], fraction=0.046, pad=0.04)
    for ax in axes:
        ax.set_xticks(range(T), labels)
        ax.set_yticks(range(T), labels)
        ax.set_xlabel(tr("key: the character looked at"))
        ax.set_ylabel(tr("query: the character looking"))
    fig.suptitle(tr("causal self-attention over {prompt}", prompt=repr(ATTENTION_PROMPT)))
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def sampling_filters(path: Path) -> None:
    """The shipped GPT's probabilities for the character after PROMPT, sorted, and
    what top-k (the k likeliest) and top-p (the fewest likeliest that hold p) keep."""
    import torch

    from grader.locale import tr
    from grader.model.artifacts import encode, shipped_model, shipped_vocab

    model, vocab = shipped_model(), shipped_vocab()
    with torch.no_grad():
        probs = torch.softmax(model(encode(PROMPT, vocab))[0, -1], dim=-1)
    order = probs.argsort(descending=True)[:16]
    values = probs[order]
    before = torch.cumsum(probs.sort(descending=True).values, 0)[:16] - values
    keeps = {
        tr("no filter"): [True] * len(order),
        f"top-k, k={TOP_K}": [i < TOP_K for i in range(len(order))],
        f"top-p, p={TOP_P}": [bool(b < TOP_P) for b in before],
    }
    plt = pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.8), dpi=100, sharey=True)
    for ax, (title, keep) in zip(axes, keeps.items()):
        kept = values * torch.tensor(keep)
        total = float(kept.sum())
        ax.bar(range(len(order)), values, color="#cccccc", label=tr("cut (set to -inf)"))
        ax.bar(range(len(order)), kept, color="tab:blue", label=tr("kept"))
        ax.set_xticks(range(len(order)), [shown(vocab[int(t)]) for t in order])
        ax.set_title(tr("{filter}: every character kept", filter=title) if all(keep) else
                     tr("{filter}: {kept} kept, holding {mass}", filter=title, kept=sum(keep),
                        mass=f"{total:.2f}"))
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel(tr("probability"))
    axes[0].legend(loc="upper right")
    fig.suptitle(tr("the next character after {prompt}, the 16 likeliest "
                    "(kept ones are renormalised before sampling)", prompt=repr(PROMPT)))
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def trace(path: Path, language: str = "en") -> None:
    """`gpt-kata trace --plot` on the submission, as a learner runs it; its report
    is kept beside the picture for the pages to include. In Chinese, as a learner
    runs `gpt-kata --lang zh trace`: the picture is kept only where a font that holds
    Chinese is installed (elsewhere trace draws it in English), and the Chinese site
    shows the English one instead; the report is kept either way."""
    problem, mistake = TRACED
    with tempfile.TemporaryDirectory() as tmp:
        written = subprocess.run([sys.executable, str(ROOT / "tests" / "learner_examples.py"),
                                  problem, mistake, "-o", str(Path(tmp).resolve())],
                                 cwd=ROOT, capture_output=True, text=True, check=True)
        submission = Path(written.stdout.strip())
        command = [sys.executable, "-m", "grader", "trace", problem, "--submission",
                   str(submission), "--plot", str(path)]
        env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "100", "GPT_KATA_LANG": language}
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=300)
    if (done.returncode not in (0, 1) or not path.is_file()) and sys.platform == "linux":
        raise RuntimeError(f"{' '.join(command[1:])} failed ({done.returncode}):\n"
                           f"{done.stdout}{done.stderr}")
    if not path.is_file():
        # Elsewhere trace cannot see the model calls (it says so): the site built
        # there says the same in place of the picture, and builds.
        plt = pyplot()
        fig, ax = plt.subplots(figsize=(9, 2), dpi=100)
        ax.axis("off")
        ax.text(0.5, 0.5, f"gpt-kata trace draws on Linux; this site was built on "
                f"{sys.platform}:\n{(done.stdout + done.stderr).strip()[-300:]}",
                ha="center", va="center", wrap=True)
        fig.savefig(path)
        plt.close(fig)
    # The file is shown by its name, as a learner's own file would be.
    report = done.stdout.replace(str(path), PLOT).replace(str(submission), submission.name)
    report = report.replace(str(ROOT) + os.sep, "")
    report = report.replace(os.path.relpath(path, ROOT), PLOT)
    if language != "en" and not cjk_font():
        # The report says the picture is in English for want of a font; the page
        # shows the English picture in its place, and says nothing of this machine.
        from grader.locale.fonts import in_english_note

        with speaking(language):
            report = report.replace(in_english_note(PLOT) + "\n", "")
    command = "gpt-kata" + (f" --lang {language}" if language != "en" else "")
    path.with_suffix(".txt").write_text(
        f"$ {command} trace {problem} --submission {submission.name} --plot {PLOT}\n{report}",
        encoding="utf-8")
    if language != "en" and not cjk_font():
        path.unlink(missing_ok=True)


def cjk_font() -> str | None:
    """The font matplotlib draws Chinese with here, or None."""
    from grader.locale.fonts import cjk_font

    return cjk_font()


def loss_curve(path: Path) -> None:
    """The run's losses, drawn by plot_losses, as `gpt-kata train` draws them."""
    from grader.model.artifacts import shipped_vocab
    from grader.model.training import plot_losses

    with LOSS_LOG.open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    log = [(int(r["step"]), float(r["train_loss"]), float(r["val_loss"])) for r in rows]
    if not plot_losses(log, path, len(shipped_vocab())):
        raise RuntimeError("matplotlib is missing: the site's pictures need it")


# The pictures in Chinese, NAME.zh.png, which the i18n plugin shows on the Chinese pages
# in place of NAME.png: drawn as `gpt-kata --lang zh` draws, the labels of this
# module's own pictures translated by the kata's catalogs (pictures.po).
DRAWN = {
    "attention-mask.png": attention,
    "attention-mask.zh.png": in_chinese(attention),
    "sampling-filters.png": sampling_filters,
    "sampling-filters.zh.png": in_chinese(sampling_filters),
    PLOT: trace,
    # The Chinese trace's report is kept even where its picture cannot be drawn: the
    # Chinese pictures page includes it.
    PLOT.replace(".png", ".zh.png"): lambda path: trace(path, "zh"),
    "loss-curve.png": loss_curve,
    "loss-curve.zh.png": in_chinese(loss_curve),
}
# What each drawing reads: a picture newer than all of these is not drawn again
# (`mkdocs serve` rebuilds at every save).
INPUTS = [Path(__file__), ROOT / "data" / "model.safetensors", LOSS_LOG,
          EXAMPLES / "expected.toml", EXAMPLES / "well_known_style.py",
          ROOT / "solutions" / "06-generate" / "solution.py",
          ROOT / "grader" / "learner" / "tools" / "trace_plot.py",
          ROOT / "grader" / "locale" / "zh" / "messages.po",
          ROOT / "grader" / "model" / "training.py", ROOT / "grader" / "locale" / "fonts.py",
          ROOT / "grader" / "locale" / "zh" / "pictures.po"]


# The languages of the hand-drawn pictures' twins, besides English.
TWINS = ("zh",)
HAND_DRAWN = "pictures"


def write_twins(pages: Path) -> list[Path]:
    """The hand-drawn pictures' twins in each language of TWINS, rewritten where they
    differ from what the sources and the catalogs make; a twin whose English is gone
    is removed."""
    from grader.locale import catalog
    from grader.maintainer.catalogs import translated_picture

    folder = pages / HAND_DRAWN
    sources = sorted(p for p in folder.glob("*.svg") if p.name.count(".") == 1)
    written = []
    for code in TWINS:
        for source in sources:
            twin = source.with_name(f"{source.stem}.{code}.svg")
            svg = translated_picture(source.read_text(encoding="utf-8"), catalog(code), code)
            if not twin.is_file() or twin.read_text(encoding="utf-8") != svg:
                hidden = twin.with_name(f".{twin.name}-{os.getpid()}")
                hidden.write_text(svg, encoding="utf-8")
                os.replace(hidden, twin)
            written.append(twin)
        for stale in folder.glob(f"*.{code}.svg"):
            if stale not in written:
                stale.unlink(missing_ok=True)
    return written


def write(pages: Path) -> dict[str, list[str]]:
    """Draw what is out of date; the pictures of each problem's page, as markdown."""
    write_twins(pages)
    out = pages / OUT
    out.mkdir(parents=True, exist_ok=True)
    newest = max(p.stat().st_mtime for p in INPUTS)
    for name, draw in DRAWN.items():
        target = out / name
        # A drawing is its picture, or its report alone (a Chinese trace where no
        # font draws Chinese): drawn again when neither is, or it is older.
        made = [p for p in (target, target.with_suffix(".txt")) if p.is_file()]
        if not made or max(p.stat().st_mtime for p in made) < newest:
            # Drawn under a hidden name of this process's, then renamed: two builds
            # at once (the tests run in parallel) never read a picture half drawn.
            hidden = f".{target.stem}-{os.getpid()}"
            draw(out / f"{hidden}{target.suffix}")
            for made in out.glob(f"{hidden}.*"):
                os.replace(made, out / f"{target.stem}{made.suffix}")
    return {slug: [markdown(name) for name in names]
            for slug, names in PROBLEM_PICTURES.items()}
