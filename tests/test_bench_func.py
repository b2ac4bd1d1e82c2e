"""bench/bench_func.py's three ways agree (its check runs before any timing)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))


def test_per_sample_ways_agree() -> None:
    import numpy as np
    from bench_func import workloads

    from autograd_gpu.func._batched import FALLBACKS

    before = dict(FALLBACKS)
    ways = workloads("cpu")
    ref = ways["torch.func"]()
    for name in ("vmap", "loop"):
        got = ways[name]()
        for k, v in ref.items():
            assert got[k].shape == v.shape == ((256,) + v.shape[1:])
            np.testing.assert_allclose(got[k], v, rtol=1e-4, atol=1e-6)
    assert FALLBACKS == before  # vmap batched every op of the MLP loss
