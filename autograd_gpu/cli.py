"""``autograd-gpu``: ``train`` (digits classifier, the main job), ``demo`` (autograd checks) and
``memory`` (activation-memory report of an MLP, a CNN or a transformer stack, with a PNG timeline).

``memory --budget B`` (and ``train --memory-budget B``) then plans activation checkpointing
with ``auto_checkpoint`` for a step under B and reports the peaks before and after
(``_cli_budget.py``).

``autograd-gpu train`` trains an MLP (or ``--model cnn``) on scikit-learn's handwritten digits or
on ``--data file.npz``, shows a progress bar, saves a checkpoint and a PNG of the learning curves
under ``--out``, and prints ``test accuracy: NN.NN%`` as its last line. See ``train.py``.
``--model transformer`` or ``lstm`` learns to sort digits (same last line) or, with ``--text
FILE``, a character-level language model that ends with a generated sample. See ``train_seq.py``.

No command loses work: every output path is checked before any training or profiling (an
existing file as ``--out`` is a usage error, exit 2); without ``--out`` each run gets a new
folder (``runs/digits-mlp``, ``runs/digits-mlp-2``, ...; ``memory``: ``runs/memory-MODEL/``,
parents created). A bare ``autograd-gpu`` prints the usage (exit 2). ``--threads`` (default 1)
limits the BLAS thread pools through ``set_num_threads``: the jobs' matrices are small, and
measured on a 2-core machine under load one thread trained the MLP 2.5x, the CNN 3.5x and the
transformer 6x faster than OpenBLAS's default of one thread per core.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import TYPE_CHECKING, Any, Callable

from ._cli_budget import HELP, BudgetOutOfReach, budget_arg, describe, plan_step

if TYPE_CHECKING:
    from .tensor import Tensor


def _grad(t: Tensor) -> Tensor:
    """``t.grad``, which the backward call just before has filled in."""
    g = t.grad
    if g is None:
        raise RuntimeError("backward left no gradient")
    return g


def demo() -> int:
    """Run the seeds' examples and print what autograd computed next to the closed forms."""
    import autograd_gpu as torch

    torch.manual_seed(0)
    t0 = time.perf_counter()
    x = torch.randn(8, requires_grad=True)
    (x ** 3 - 2 * x).sum().backward()
    ok1 = torch.allclose(_grad(x), 3 * x.detach() ** 2 - 2)
    print(f"d/dx sum(x^3 - 2x) == 3x^2 - 2: {ok1}")
    x.grad = None
    torch.sigmoid(x).sum().backward()
    sig = torch.sigmoid(x.detach())
    ok2 = torch.allclose(_grad(x), sig * (1 - sig))
    print(f"d/dx sum(sigmoid(x)) == s(1 - s): {ok2}")
    w = torch.tensor([1.5], requires_grad=True)
    b = torch.tensor([0.3], requires_grad=True)
    loss = (torch.sigmoid(torch.tensor([2.0]) * w + b) - 1.0) ** 2
    print("loss.grad_fn:", loss.grad_fn, "->", loss.grad_fn.next_functions)
    loss.backward()
    print("w.grad:", w.grad, "b.grad:", b.grad)
    xs = torch.tensor(1.5, dtype=torch.float64, requires_grad=True)
    ok3 = torch.autograd.gradcheck(lambda t: (t.sin() * t.exp()).sum(), (xs,))
    print(f"gradcheck(sin(x) * exp(x)) in float64: {ok3}")
    print(f"done in {time.perf_counter() - t0:.3f} s")
    return 0 if ok1 and ok2 and ok3 else 1


DESCRIPTION = ("Train and inspect small networks with autograd_gpu, a PyTorch-compatible "
               "autograd library. Run 'autograd-gpu COMMAND --help' for a command's options.")


def _positive(kind: type, zero: bool = False) -> Any:
    """An argparse ``type`` accepting numbers of ``kind`` above zero (``zero``: or equal)."""
    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid {kind.__name__} value: {text!r}") from None
        if not (value >= 0 if zero else value > 0):
            raise argparse.ArgumentTypeError(f"must be {'>=' if zero else '>'} 0, got {text}")
        return value
    parse.__name__ = kind.__name__
    return parse


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows ``(default: ...)`` except for flags and for options whose default depends on the job
    (``None``), whose help says it."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default is None or action.default is False:
            return action.help
        return super()._get_help_string(action)


def _add_train_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "train", help="train a digits classifier (MLP or CNN), or a transformer or LSTM on a "
                      "sorting task or a text, and report its test accuracy",
        description="Train an MLP or a small CNN on scikit-learn's 8x8 handwritten digits (or on "
                    "--data); or a causal transformer or an LSTM on sorting 6 digits (--task "
                    "sort, the default for those models) or as a character-level language model "
                    "of --text FILE. Runs on CUDA when available and saves checkpoint.pt and "
                    "curves.png in a new folder under runs/ (or --out). Reload a trained model "
                    "in Python with autograd_gpu.train.load_model(FOLDER).",
        formatter_class=_HelpFormatter)
    p.add_argument("--model", choices=("mlp", "cnn", "transformer", "lstm"), default="mlp",
                   help="network to train")
    p.add_argument("--data", metavar="FILE.npz", default=None,
                   help="mlp/cnn: a NumPy .npz file with arrays x (N, D), (N, H, W) or "
                        "(N, C, H, W) and y (N,) of integer labels (default: scikit-learn's "
                        "digits)")
    p.add_argument("--task", choices=("sort",), default=None,
                   help="transformer/lstm: sort 6 digits from {0, 1, 2} (the default)")
    p.add_argument("--text", metavar="FILE", default=None,
                   help="transformer/lstm: train a character-level language model on this "
                        "UTF-8 text file and print a generated sample")
    p.add_argument("--epochs", metavar="N", type=_positive(int), default=None,
                   help="passes over the training set (default: 25; sort: 40)")
    p.add_argument("--steps", metavar="N", type=_positive(int), default=1500,
                   help="--text: training steps (random windows)")
    p.add_argument("--batch-size", metavar="N", type=_positive(int), default=None,
                   help="samples per step (default: 64; transformer/lstm: 32)")
    p.add_argument("--lr", type=_positive(float), default=None,
                   help="learning rate (default: Adam 1e-3, SGD 0.05; transformer/lstm, with "
                        "cosine decay: Adam 3e-3, SGD 0.3)")
    p.add_argument("--optimizer", choices=("adam", "sgd"), default="adam",
                   help="Adam, or SGD with momentum 0.9")
    p.add_argument("--label-smoothing", metavar="EPS", type=float, default=0.1,
                   help="mlp/cnn: cross-entropy label smoothing, in [0, 1)")
    p.add_argument("--block-size", metavar="N", type=_positive(int), default=64,
                   help="--text: characters of context")
    p.add_argument("--temperature", metavar="T", type=_positive(float), default=0.8,
                   help="--text: sampling temperature (lower: more conservative)")
    p.add_argument("--top-k", metavar="K", type=_positive(int), default=10,
                   help="--text: sample among the k most likely characters")
    p.add_argument("--sample-length", metavar="N", type=_positive(int), default=300,
                   help="--text: characters to generate at the end")
    p.add_argument("--seed", metavar="N", type=int, default=0,
                   help="random seed of the data split, the initial weights and the shuffling")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                   help="auto: CUDA when available, else the CPU")
    p.add_argument("--out", metavar="FOLDER", default=None,
                   help="folder for checkpoint.pt and curves.png, created if needed; files of "
                        "the same names in it are replaced (default: a new folder per run, "
                        "runs/digits-MODEL, runs/DATA-MODEL for --data DATA.npz, "
                        "runs/sort-MODEL or runs/text-MODEL, numbered -2, -3, ... when taken)")
    p.add_argument("--threads", metavar="N", type=_positive(int, zero=True), default=1,
                   help="CPU threads for matrix products (0: the BLAS library's default, one "
                        "per core); one is fastest for these small networks")
    p.add_argument("--memory-budget", metavar="B", type=budget_arg, default=None,
                   help="before training, let auto_checkpoint choose modules to checkpoint so "
                        "that a step (forward, loss, backward) on a batch peaks at or under B: "
                        + HELP + "; prints the plan and the peaks before and after (and during "
                        "training) and writes memory.png beside curves.png; a budget no plan "
                        "reaches is a usage error before training. These models are small next "
                        "to their data and weights, and the transformer's encoder and the LSTM "
                        "are checkpointed whole: on the CPU at --batch-size 512 about 93%% is "
                        "reachable for mlp and cnn, 89%% for the transformer, nothing for lstm")
    p.add_argument("--compile", action="store_true",
                   help="mlp and cnn: run the training step through autograd_gpu.compile "
                        "(recorded on its first batches, then replayed: the same numbers as "
                        "without it, faster for these small models on the CPU)")
    p.add_argument("--quiet", action="store_true",
                   help="no progress bar; print only the test accuracy (--text: the sample)")
    return p


def _set_threads(n: int) -> None:
    """Limit the BLAS thread pools to ``n`` threads (0: leave them as they are)."""
    if n:
        from .functions.settings import set_num_threads

        set_num_threads(n)


def train(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Run ``autograd-gpu train``; its last line of output is ``test accuracy: NN.NN%`` (with
    ``--text``: the generated sample, then ``validation loss: X.XXXX``)."""
    if args.model in ("transformer", "lstm"):
        return _train_seq(args, parser)
    from . import train as job

    if args.task is not None or args.text is not None:
        parser.error("--task and --text need --model transformer or --model lstm")
    cfg = job.Config(model=args.model, data=args.data, epochs=args.epochs or 25,
                     batch_size=args.batch_size or 64, lr=args.lr, optimizer=args.optimizer,
                     label_smoothing=args.label_smoothing, seed=args.seed, device=args.device,
                     out=args.out, quiet=args.quiet, memory_budget=args.memory_budget,
                     compile=args.compile)
    if not 0 <= args.label_smoothing < 1:
        parser.error(f"--label-smoothing must be in [0, 1), got {args.label_smoothing}")
    _set_threads(args.threads)
    try:
        _, history = job.run(cfg)
    except job.UsageError as e:
        parser.error(str(e))
    print(f"test accuracy: {100 * history['test_acc'][-1]:.2f}%")
    return 0


def _train_seq(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """``autograd-gpu train --model transformer|lstm``: the sort task or ``--text FILE``."""
    from . import train_seq as seq

    if args.compile:
        parser.error("--compile is for --model mlp or cnn")
    if args.data is not None:
        parser.error(f"--data is for --model mlp or cnn; --model {args.model} takes --task sort "
                     "or --text FILE")
    if args.task is not None and args.text is not None:
        parser.error("--task and --text exclude each other")
    job = "sort" if args.text is None else "text"
    cfg = seq.SeqConfig(model=args.model, task="sort" if job == "sort" else None, text=args.text,
                        epochs=args.epochs or 40, steps=args.steps,
                        batch_size=args.batch_size or 32, lr=args.lr, optimizer=args.optimizer,
                        seed=args.seed, device=args.device, out=args.out, quiet=args.quiet,
                        block_size=args.block_size, temperature=args.temperature,
                        top_k=args.top_k, sample_length=args.sample_length,
                        memory_budget=args.memory_budget)
    _set_threads(args.threads)
    try:
        if job == "sort":
            _, history = seq.run_sort(cfg)
            print(f"test accuracy: {100 * history['test_acc'][-1]:.2f}%")
            return 0
        _, history, text = seq.run_text(cfg)
    except seq.UsageError as e:
        parser.error(str(e))
    if not args.quiet:
        print("sample:")
    print(text)
    print(f"validation loss: {history['val_loss'][-1]:.4f}")
    return 0


def _add_memory_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "memory", help="report the activation memory of one training step and plot its "
                       "timeline; with --budget, plan activation checkpointing to fit a budget",
        description="Profile one training step (forward, cross-entropy, backward) of an MLP "
                    "784-256-256-10, a small CNN on 1x28x28 inputs or a stack of 4 transformer "
                    "encoder layers (d 64, 4 heads, sequences of 32, a class per token): the "
                    "activations saved for backward per module and per operation, peaks, the "
                    "memory kept under grad mode, no_grad, inference_mode and checkpointing, and "
                    "a PNG timeline (needs matplotlib; without it the report is printed and no "
                    "PNG written). With --budget B, auto_checkpoint then chooses which modules "
                    "to checkpoint so that the step peaks at or under B; the plan, the measured "
                    "peaks before and after, and both timelines on one PNG follow. A budget no "
                    "plan reaches is an error (exit 2) naming the smallest peak found.",
        formatter_class=_HelpFormatter)
    p.add_argument("--model", choices=("mlp", "cnn", "transformer"), default="mlp",
                   help="network to profile")
    p.add_argument("--batch", metavar="N", type=_positive(int), default=None,
                   help="batch size (default: 4096 for mlp, 64 for cnn and transformer)")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                   help="auto: CUDA when available, else the CPU")
    p.add_argument("--out", metavar="FILE.png", default=None,
                   help="path of the PNG timeline, its folders created if needed; an existing "
                        "file is replaced (default: runs/memory-MODEL/memory.png)")
    p.add_argument("--budget", metavar="B", type=budget_arg, default=None,
                   help="plan activation checkpointing for a peak at or under B: " + HELP
                        + ". Reachable on the CPU at the default batches: about 87%% of the "
                          "peak for the shallow mlp (its input alone is 42%%), 78%% for the cnn, "
                          "34%% for the transformer (on CUDA, where the ops' temporaries count, "
                          "less: the mlp not at all)")
    return p


def _check_png_path(path: str) -> str | None:
    """Why ``path`` cannot be written as a file (or ``None`` when it can): checked before any
    work."""
    if os.path.isdir(path):
        return f"--out {path}: is a folder; give a file name such as {path.rstrip('/')}/memory.png"
    parent = os.path.dirname(os.path.abspath(path))
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        return f"--out {path}: cannot create its folder, {parent} is a file"
    if not os.access(parent, os.W_OK | os.X_OK):
        return f"--out {path}: cannot write in {parent} (permission denied)"
    return None


def _memory_job(kind: str, batch: int, dev: str) -> tuple[Any, Any, Callable[[Any], Any]]:
    """The model ``autograd-gpu memory`` profiles, a random input batch on ``dev``, and the
    step's loss (cross-entropy against random labels) as a function of the model's output."""
    import autograd_gpu as torch
    from . import nn

    F = nn.functional
    if kind == "transformer":
        # NOTE: a root Sequential of blocks, so that auto_checkpoint can checkpoint runs of
        # layers; PyTorch's layer defaults otherwise (dropout 0.1, post-norm).
        model: Any = nn.Sequential(*[nn.TransformerEncoderLayer(64, 4, 256, batch_first=True)
                                for _ in range(4)], nn.Linear(64, 10))
        sample: tuple[int, ...] = (32, 64)
    elif kind == "cnn":
        model = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(32 * 7 * 7, 10))
        sample = (1, 28, 28)
    else:
        model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                              nn.Linear(256, 10))
        sample = (784,)
    model = model.to(dev)
    x = torch.randn(batch, *sample, device=dev)
    y = torch.randint(0, 10, (batch, *sample[:-1]) if kind == "transformer" else (batch,),
                      device=dev)

    def loss_fn(out: Any) -> Any:
        return F.cross_entropy(out.reshape(-1, 10), y.reshape(-1))

    return model, x, loss_fn


def memory(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Run ``autograd-gpu memory``: print the profiler's tables and the savings report, write the
    PNG timeline; with ``--budget``, plan checkpointing and report and plot both steps."""
    import autograd_gpu as torch

    from .profiler import profile_memory, savings_report

    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: no CUDA device is available (install the cuda extra and "
                     "check the driver), or use --device cpu")
    out = args.out or os.path.join("runs", f"memory-{args.model}", "memory.png")
    problem = _check_png_path(out)
    if problem:
        parser.error(problem)
    dev = args.device if args.device != "auto" else (
        "cuda" if torch.cuda.is_available() else "cpu")
    batch = args.batch or (4096 if args.model == "mlp" else 64)
    torch.manual_seed(0)
    model, x, loss_fn = _memory_job(args.model, batch, dev)
    with profile_memory(model, device=dev) as prof:
        loss = loss_fn(model(x))
        loss.backward()
    del loss
    mib = 1024.0 ** 2
    print(f"autograd-gpu memory: {args.model}, batch {batch}, device {dev}")
    if dev == "cuda":
        info = torch.cuda.device_memory_info()
        if info is not None:
            print(f"device: {info.get('name', '?')}, used {info['used'] / mib:,.0f} MiB of "
                  f"{info['total'] / mib:,.0f} MiB")
    print(f"\nsaved activations: {prof.total_bytes:,} bytes ({prof.total_bytes / mib:.2f} MiB); "
          + ", ".join(f"{k} peak {v / mib:.2f} MiB" for k, v in prof.peaks.items()))
    print("\nper module:\n" + prof.table("module"))
    print("\nper op:\n" + prof.table("op"))
    model.zero_grad(set_to_none=True)
    print(f"\nkept after one forward (bytes; {dev}):\n" + savings_report(model, x).table())
    title = f"autograd-gpu memory: {args.model}, batch {batch}, {dev}"
    run = None
    if args.budget is not None:
        try:
            run = plan_step(model, (x,), loss_fn, args.budget, dev)
        except BudgetOutOfReach as e:
            parser.error(f"--budget {describe(args.budget)}: {e}")
        print(f"\n{run.plan}\n\n{run.summary()}")
        title += f", budget {describe(args.budget)}"
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        # NOTE: the report above is the main product; a missing optional plotting package is
        # one line on stderr, exit status 0.
        print("no PNG written: matplotlib is not installed (pip install matplotlib, or the "
              "examples extra: pip install -e '.[examples]')", file=sys.stderr)
        return 0
    from .utils._atomic import replace_atomically

    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    replace_atomically(out, (lambda fh: prof.plot(fh, title=title)) if run is None
                       else (lambda fh: run.plot(fh, title=title)))
    print(f"\nwrote {out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="autograd-gpu", description=DESCRIPTION)
    sub = parser.add_subparsers(dest="cmd", title="commands")
    from . import run as run_cmd  # `autograd-gpu run` (issue #17): autograd_gpu/run.py

    run_parser = run_cmd.add_parser(sub)
    sub.add_parser("demo", help="run a few autograd examples and check them against closed-form "
                                "derivatives",
                   description="Differentiate a few small functions with autograd_gpu and "
                               "compare the gradients with their closed forms (and gradcheck).")
    train_parser = _add_train_parser(sub)
    memory_parser = _add_memory_parser(sub)
    args = parser.parse_args(argv)
    if args.cmd == "run":
        return run_cmd.from_args(args, run_parser)
    if args.cmd == "train":
        return train(args, train_parser)
    if args.cmd == "memory":
        return memory(args, memory_parser)
    if args.cmd == "demo":
        return demo()
    # NOTE: argparse's convention for a missing required argument: usage and error on stderr,
    # exit status 2.
    parser.error("choose a command (autograd-gpu --help lists them)")
    return 2
