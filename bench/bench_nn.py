"""Issues #15 and #16's benchmarks: training steps against PyTorch CPU, one thread, same weights and
data, in one process taking turns round by round (so machine load hits both alike).

- ``unet``: a small U-Net-like CNN on 1x32x32 inputs (batch 8): Conv2d + GroupNorm + SiLU,
  a strided Conv2d down, the same at 16x16, ConvTranspose2d up, a skip concatenation,
  ``interpolate`` (bilinear), a 1x1 Conv2d head, MSE loss.
- ``cnn1d``: a 1-D CNN on 4x256 sequences (batch 16): Conv1d + BatchNorm1d + ReLU + MaxPool1d
  twice, AdaptiveAvgPool1d, Linear, cross-entropy.
- ``lstm``: a 2-layer LSTM (hidden 256) over 64 steps of batch 32, a Linear head on the last
  step, cross-entropy (issue #16).
- ``transformer``: a 4-layer TransformerEncoder (d_model 128, 4 heads, feed-forward 512, no
  dropout, batch_first) over 64 positions of batch 32, mean-pooled, a Linear head,
  cross-entropy (issue #16).

Each step is zero_grad, forward, loss, backward (no optimizer). Loss and every parameter
gradient are checked against torch before timing. Aim (issue #15): ours/torch <= 1.5.

Usage:
    python bench/bench_nn.py [--rounds 15] [--iters 10] [--write]

Output: one JSON line per model and implementation (median ms per step) and the ratios;
``--write`` records them in bench/RESULTS.md ("nn training steps"; the reading of the numbers
is its own section after it).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # NOTE: must happen before numpy or torch is imported

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
import torch  # noqa: E402

import autograd_gpu as ag  # noqa: E402
from bench_core import git_commit, machine, write_section  # noqa: E402


def _unet(T: Any) -> Any:
    nn = T.nn

    class UNet(nn.Module):  # type: ignore[name-defined,misc]
        def __init__(self) -> None:
            super().__init__()
            self.enc1 = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.GroupNorm(4, 16),
                                      nn.SiLU())
            self.down = nn.Conv2d(16, 32, 3, stride=2, padding=1)
            self.enc2 = nn.Sequential(nn.Conv2d(32, 32, 3, padding=1), nn.GroupNorm(8, 32),
                                      nn.SiLU())
            self.up = nn.ConvTranspose2d(32, 16, 2, stride=2)
            self.dec = nn.Sequential(nn.Conv2d(32, 16, 3, padding=1), nn.GroupNorm(4, 16),
                                     nn.SiLU())
            self.head = nn.Conv2d(16, 1, 1)

        def forward(self, x: Any) -> Any:
            a = self.enc1(x)
            b = self.enc2(self.down(a))
            u = self.up(b)
            skip = T.nn.functional.interpolate(b, scale_factor=2, mode="bilinear",
                                               align_corners=False)[:, :16]
            d = self.dec(T.cat([u + skip, a], 1))
            return self.head(d)

    return UNet()


def _cnn1d(T: Any) -> Any:
    nn = T.nn
    return nn.Sequential(
        nn.Conv1d(4, 32, 5, padding=2), nn.BatchNorm1d(32), nn.ReLU(), nn.MaxPool1d(2),
        nn.Conv1d(32, 64, 5, padding=2), nn.BatchNorm1d(64), nn.ReLU(), nn.MaxPool1d(2),
        nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(64, 10))


def _lstm(T: Any) -> Any:
    nn = T.nn

    class Net(nn.Module):  # type: ignore[name-defined,misc]
        def __init__(self) -> None:
            super().__init__()
            self.lstm = nn.LSTM(256, 256, num_layers=2)
            self.head = nn.Linear(256, 10)

        def forward(self, x: Any) -> Any:
            out, _ = self.lstm(x)  # (seq, batch, hidden)
            return self.head(out[-1])

    return Net()


def _transformer(T: Any) -> Any:
    nn = T.nn

    class Net(nn.Module):  # type: ignore[name-defined,misc]
        def __init__(self) -> None:
            super().__init__()
            layer = nn.TransformerEncoderLayer(128, 4, dim_feedforward=512, dropout=0.0,
                                               batch_first=True)
            self.encoder = nn.TransformerEncoder(layer, 4, enable_nested_tensor=False)
            self.head = nn.Linear(128, 10)

        def forward(self, x: Any) -> Any:
            return self.head(self.encoder(x).mean(1))

    return Net()


MODELS = {
    "unet": (_unet, (8, 1, 32, 32), "mse"),
    "cnn1d": (_cnn1d, (16, 4, 256), "ce"),
    "lstm": (_lstm, (64, 32, 256), "ce32"),  # issue #16: 2 layers, hidden 256, seq 64, batch 32
    "transformer": (_transformer, (32, 64, 128), "ce32"),  # issue #16: 4 layers, d 128, 4 heads
}
AIMS = {"unet": 1.5, "cnn1d": 1.5, "lstm": 1.5, "transformer": 1.2}


def _step(T: Any, net: Any, x: Any, y: Any, loss: str) -> Any:
    for p in net.parameters():
        p.grad = None
    out = net(x)
    F = T.nn.functional
    value = F.mse_loss(out, y) if loss == "mse" else F.cross_entropy(out, y)
    value.backward()
    return value


def _setup(name: str) -> dict[str, tuple[Any, ...]]:
    build, shape, loss = MODELS[name]
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(np.float32)
    y = (rng.standard_normal(shape).astype(np.float32) if loss == "mse"
         else rng.integers(0, 10, 32 if loss == "ce32" else shape[0]))
    ours, theirs = build(ag), build(torch)
    with torch.no_grad():
        for (n1, p), (n2, q) in zip(ours.named_parameters(), theirs.named_parameters()):
            assert n1 == n2, (n1, n2)
            q.copy_(torch.from_numpy(np.array(p.detach().numpy())))
    return {"ours": (ag, ours, ag.tensor(x), ag.tensor(y), loss),
            "torch": (torch, theirs, torch.from_numpy(x), torch.from_numpy(y), loss)}


def measure(name: str, rounds: int, iters: int) -> dict[str, float]:
    runs = _setup(name)
    losses = {k: float(_step(*v).detach()) for k, v in runs.items()}
    assert abs(losses["ours"] - losses["torch"]) <= 1e-4 * max(1.0, abs(losses["torch"])), losses
    for p, q in zip(runs["ours"][1].parameters(), runs["torch"][1].parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=2e-3, atol=2e-5)
    times: dict[str, list[float]] = {k: [] for k in runs}
    for _ in range(2):  # warm-up
        for v in runs.values():
            _step(*v)
    for _ in range(rounds):
        for impl, v in runs.items():
            t0 = time.perf_counter()
            for _ in range(iters):
                _step(*v)
            times[impl].append((time.perf_counter() - t0) / iters * 1e3)
    return {k: statistics.median(v) for k, v in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--iters", type=int, default=10)
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--models", default=",".join(MODELS),
                        help="comma-separated subset of " + ", ".join(MODELS))
    args = parser.parse_args()
    torch.set_num_threads(1)
    rows = []
    for name in args.models.split(","):
        med = measure(name, args.rounds, args.iters)
        ratio = med["ours"] / med["torch"]
        rows.append((name, med["ours"], med["torch"], ratio))
        for impl, ms in med.items():
            print(json.dumps({"bench": name, "impl": impl, "median_ms": round(ms, 3)}))
        print(json.dumps({"bench": name, "ratio_ours_over_torch": round(ratio, 3)}))
    if args.write:
        info = machine()
        lines = [
            f"Machine: {info}; commit {git_commit()}; torch {torch.__version__}, NumPy "
            f"{np.__version__}; one thread; median of {args.rounds} rounds of {args.iters} "
            "steps, the two libraries taking turns; loss and gradients checked first. A step "
            "is zero_grad + forward + loss + backward. Aims: ours/torch <= 1.5 (issue #15's CNNs, "
            "#16's LSTM), <= 1.2 (#16's transformer).",
            "",
            "| model | ours ms | torch ms | ours/torch | aim |",
            "|---|---:|---:|---:|---|",
        ]
        for name, ours, theirs, ratio in rows:
            aim = AIMS[name]
            lines.append(f"| {name} | {ours:.2f} | {theirs:.2f} | {ratio:.2f} | <= {aim}: "
                         f"{'met' if ratio <= aim else '**not met**'} |")
        heading = "## nn training steps (bench/bench_nn.py)"
        write_section(heading, heading + "\n\n" + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
