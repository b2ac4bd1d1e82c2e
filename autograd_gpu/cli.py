"""``autograd-gpu``: ``train`` (digits classifier, the main job), ``demo`` (autograd checks) and
``memory`` (activation-memory report of an MLP or a CNN, with a PNG timeline).

``autograd-gpu train`` trains an MLP (or ``--model cnn``) on scikit-learn's handwritten digits or
on ``--data file.npz``, shows a progress bar, saves a checkpoint and a PNG of the learning curves
under ``--out``, and prints ``test accuracy: NN.NN%`` as its last line. See ``train.py``.
``--model transformer`` or ``lstm`` learns to sort digits (same last line) or, with ``--text
FILE``, a character-level language model that ends with a generated sample. See ``train_seq.py``.
"""

from __future__ import annotations

import argparse
import os
import time
from typing import TYPE_CHECKING, Any

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


def _positive(kind: type) -> Any:
    """An argparse ``type`` accepting numbers of ``kind`` above zero."""
    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid {kind.__name__} value: {text!r}") from None
        if not value > 0:
            raise argparse.ArgumentTypeError(f"must be > 0, got {text}")
        return value
    parse.__name__ = kind.__name__
    return parse


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows ``(default: ...)`` except for options whose default depends on the job (``None``),
    whose help says it."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default is None:
            return action.help
        return super()._get_help_string(action)


def _add_train_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "train", help="train a digits classifier (MLP or CNN), or a transformer or LSTM on a "
                      "sorting task or a text, and report its test accuracy",
        description="Train an MLP or a small CNN on scikit-learn's 8x8 handwritten digits (or on "
                    "--data); or a causal transformer or an LSTM on sorting 6 digits (--task "
                    "sort, the default for those models) or as a character-level language model "
                    "of --text FILE. Runs on CUDA when available and saves a checkpoint and "
                    "learning curves.",
        formatter_class=_HelpFormatter)
    p.add_argument("--model", choices=("mlp", "cnn", "transformer", "lstm"), default="mlp",
                   help="network to train")
    p.add_argument("--data", metavar="FILE.npz", default=None,
                   help="mlp/cnn: arrays x (N, D), (N, H, W) or (N, C, H, W) and y (N,) integer "
                        "labels; default: scikit-learn's digits")
    p.add_argument("--task", choices=("sort",), default=None,
                   help="transformer/lstm: sort 6 digits from {0, 1, 2} (the default task)")
    p.add_argument("--text", metavar="FILE", default=None,
                   help="transformer/lstm: train a character-level language model on this "
                        "UTF-8 text file and print a generated sample")
    p.add_argument("--epochs", type=_positive(int), default=None,
                   help="passes over the training set (default: 25; sort: 40)")
    p.add_argument("--steps", type=_positive(int), default=1500,
                   help="--text: training steps (random windows)")
    p.add_argument("--batch-size", type=_positive(int), default=None,
                   help="samples per step (default: 64; transformer/lstm: 32)")
    p.add_argument("--lr", type=_positive(float), default=None,
                   help="learning rate (default: 1e-3; transformer/lstm: 3e-3 with cosine decay)")
    p.add_argument("--optimizer", choices=("adam", "sgd"), default="adam",
                   help="Adam, or SGD with momentum 0.9")
    p.add_argument("--label-smoothing", type=float, default=0.1,
                   help="mlp/cnn: cross-entropy label smoothing, in [0, 1)")
    p.add_argument("--block-size", type=_positive(int), default=64,
                   help="--text: characters of context")
    p.add_argument("--temperature", type=_positive(float), default=0.8,
                   help="--text: sampling temperature (lower: more conservative)")
    p.add_argument("--top-k", type=_positive(int), default=10,
                   help="--text: sample among the k most likely characters")
    p.add_argument("--sample-length", type=_positive(int), default=300,
                   help="--text: characters to generate at the end")
    p.add_argument("--seed", type=int, default=0, help="seeds the split, the init and shuffling")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                   help="auto: CUDA when available, else the CPU")
    p.add_argument("--out", default=None,
                   help="folder for checkpoint.pt and curves.png (default: runs/digits, "
                        "runs/sort-MODEL or runs/text-MODEL)")
    p.add_argument("--quiet", action="store_true",
                   help="no progress bar; print only the test accuracy (--text: the sample)")
    return p


def train(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Run ``autograd-gpu train``; its last line of output is ``test accuracy: NN.NN%`` (with
    ``--text``: the generated sample, then ``validation loss: X.XXXX``)."""
    if args.model in ("transformer", "lstm"):
        return _train_seq(args, parser)
    from . import train as job

    if args.task is not None or args.text is not None:
        parser.error("--task and --text need --model transformer or --model lstm")
    cfg = job.Config(model=args.model, data=args.data, epochs=args.epochs or 25,
                     batch_size=args.batch_size or 64, lr=args.lr or 1e-3,
                     optimizer=args.optimizer, label_smoothing=args.label_smoothing,
                     seed=args.seed, device=args.device,
                     out=args.out or os.path.join("runs", "digits"), quiet=args.quiet)
    if not 0 <= args.label_smoothing < 1:
        parser.error(f"--label-smoothing must be in [0, 1), got {args.label_smoothing}")
    try:
        _, history = job.run(cfg)
    except job.UsageError as e:
        parser.error(str(e))
    print(f"test accuracy: {100 * history['test_acc'][-1]:.2f}%")
    return 0


def _train_seq(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """``autograd-gpu train --model transformer|lstm``: the sort task or ``--text FILE``."""
    from . import train_seq as seq

    if args.data is not None:
        parser.error(f"--data is for --model mlp or cnn; --model {args.model} takes --task sort "
                     "or --text FILE")
    if args.task is not None and args.text is not None:
        parser.error("--task and --text exclude each other")
    job = "sort" if args.text is None else "text"
    cfg = seq.SeqConfig(model=args.model, task="sort" if job == "sort" else None, text=args.text,
                        epochs=args.epochs or 40, steps=args.steps,
                        batch_size=args.batch_size or 32, lr=args.lr or 3e-3,
                        optimizer=args.optimizer, seed=args.seed, device=args.device,
                        out=args.out or os.path.join("runs", f"{job}-{args.model}"),
                        quiet=args.quiet, block_size=args.block_size,
                        temperature=args.temperature, top_k=args.top_k,
                        sample_length=args.sample_length)
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
        "memory", help="activation-memory report: saved tensors per module/op, savings by mode",
        description="Profile one training step (forward, cross-entropy, backward) of an MLP "
                    "784-256-256-10 or a small CNN on 1x28x28 inputs: saved activations per "
                    "module and per op, peaks, kept bytes under grad mode, no_grad, "
                    "inference_mode and checkpointing, and a PNG timeline.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--model", choices=("mlp", "cnn"), default="mlp", help="network to profile")
    p.add_argument("--batch", type=_positive(int), default=None,
                   help="batch size (default: 4096 for mlp, 64 for cnn)")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                   help="auto: CUDA when available, else the CPU")
    p.add_argument("--out", default="memory.png", help="path of the PNG timeline")
    return p


def _memory_model(kind: str) -> tuple[Any, tuple[int, ...]]:
    """The model ``autograd-gpu memory`` profiles and the shape of one input sample."""
    from . import nn

    if kind == "cnn":
        return nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(32 * 7 * 7, 10)), (1, 28, 28)
    return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                         nn.Linear(256, 10)), (784,)


def memory(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Run ``autograd-gpu memory``: print the profiler's tables and the savings report, write the
    PNG timeline."""
    import autograd_gpu as torch

    from .profiler import profile_memory, savings_report

    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: no CUDA device is available (install the cuda extra and "
                     "check the driver), or use --device cpu")
    dev = args.device if args.device != "auto" else (
        "cuda" if torch.cuda.is_available() else "cpu")
    batch = args.batch or (4096 if args.model == "mlp" else 64)
    torch.manual_seed(0)
    model, sample = _memory_model(args.model)
    model = model.to(dev)
    x = torch.randn(batch, *sample, device=dev)
    y = torch.randint(0, 10, (batch,), device=dev)
    with profile_memory(model, device=dev) as prof:
        loss = torch.nn.functional.cross_entropy(model(x), y)
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
    path = prof.plot(args.out, title=f"autograd-gpu memory: {args.model}, batch {batch}, {dev}")
    print(f"\nwrote {path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="autograd-gpu", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd")
    from . import run as run_cmd  # `autograd-gpu run` (issue #17): autograd_gpu/run.py

    run_parser = run_cmd.add_parser(sub)
    sub.add_parser("demo", help="the seeds' autograd examples, checked against closed forms")
    train_parser = _add_train_parser(sub)
    memory_parser = _add_memory_parser(sub)
    args = parser.parse_args(argv)
    if args.cmd == "run":
        return run_cmd.from_args(args, run_parser)
    if args.cmd == "train":
        return train(args, train_parser)
    if args.cmd == "memory":
        return memory(args, memory_parser)
    return demo()
