"""What ``autograd_gpu.load`` allocates on hostile checkpoints, against what the file holds.

Each file is built as in ``tests/utils/test_serialization_hostile.py`` (whose builders this
imports); the peak is ``tracemalloc``'s (it sees NumPy's array buffers) while one ``load`` runs,
from a file object. "Naive" is what a loader that reads every reference into its own array would
have to allocate (the behaviour before issue #13), computed, not run.

    python bench/bench_load.py
"""

from __future__ import annotations

import io
import platform
import sys
import zipfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import autograd_gpu as ag  # noqa: E402
from autograd_gpu.utils.serialization import SerializationError  # noqa: E402
from tests.utils.test_serialization_hostile import (  # noqa: E402
    MiB, checkpoint, node, npy, peak_bytes, sample, saved,
)
from tests.utils.test_serialization import exact  # noqa: E402


def _load(content: bytes) -> str:
    try:
        ag.load(io.BytesIO(content))
    except SerializationError:
        return "refused"
    return "loaded"


def _row(name: str, content: bytes, naive: int | None) -> tuple[str, ...]:
    outcome = _load(content)
    peak = peak_bytes(lambda: _load(content))
    return (name, f"{len(content) / 1e6:.3f}", f"{peak / 1e6:.3f}",
            "-" if naive is None else f"{naive / 1e9:.2f} GB", outcome)


def _many_refs(n: int) -> tuple[bytes, int]:
    arr = np.arange(MiB, dtype=np.float32)  # 4 MiB
    root = {"$": "list", "items": [node(shape=arr.shape) for _ in range(n)]}
    return checkpoint(root, {"t0.npy": npy(arr)}), n * arr.nbytes


def _bit_flips() -> dict[str, int]:
    content, want = saved(sample()), exact(sample())
    out = {"flips": 0, "refused": 0, "identical": 0, "wrong": 0}
    for bit in range(8 * len(content)):
        flipped = bytearray(content)
        flipped[bit // 8] ^= 1 << (bit % 8)
        out["flips"] += 1
        try:
            got = ag.load(io.BytesIO(bytes(flipped)))
        except SerializationError:
            out["refused"] += 1
            continue
        out["identical" if exact(got) == want else "wrong"] += 1
    return out


def main() -> None:
    rows: list[tuple[str, ...]] = []
    for n in (3000, 30000):
        content, naive = _many_refs(n)
        rows.append(_row(f"one 4 MiB array referenced {n} times", content, naive))
    big = saved(ag.arange(4 * MiB, dtype=ag.float32))
    rows.append(_row("one honest 16 MiB tensor", big, None))
    bomb = checkpoint(node(dtype="uint8", shape=[16 * MiB]),
                      {"t0.npy": npy(np.zeros(16 * MiB, np.uint8))}, zipfile.ZIP_DEFLATED)
    rows.append(_row("deflate bomb (16 MiB inside)", bomb, 16 * MiB))
    lie = checkpoint(node(dtype="float32", shape=[1 << 30]),
                     {"t0.npy": npy(np.zeros(2, np.float32))})
    rows.append(_row("header declares 4 GiB, member holds 8 B", lie, 4 << 30))
    print(f"machine: {platform.processor() or platform.machine()}, Python "
          f"{platform.python_version()}, NumPy {np.__version__}")
    print("| file | size (MB) | load peak (MB) | naive loader | outcome |")
    print("|---|---:|---:|---:|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    flips = _bit_flips()
    print(f"\nevery single-bit flip of a {flips['flips'] // 8}-byte checkpoint: "
          f"{flips['flips']} flips, {flips['refused']} refused, {flips['identical']} load "
          f"identical values, {flips['wrong']} wrong")


if __name__ == "__main__":
    main()
