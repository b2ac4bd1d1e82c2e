"""``_foreach.tick`` (a step count's ``add_(1)`` on the foreach path, per parameter per step) gives
NumPy's ``add`` bits for float32 and float64 steps, edge values included."""

from __future__ import annotations

import numpy as np
import pytest

import autograd_gpu as ag
from autograd_gpu.optim import _foreach

VALUES = [0.0, -0.0, 1.0, -1.0, 7.0, 2.0**24 - 1, 2.0**24, 2.0**24 + 2, 2.0**53, -(2.0**53),
          2.0**-24, 2.0**-24 + 2.0**-47, 1e-30, -0.75, 3e38, -3e38, float("inf"),
          float("-inf"), float("nan")]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_tick_is_numpys_add(dtype: type) -> None:
    for v in VALUES:
        step = ag.tensor(np.array(v, dtype=dtype))
        want = np.add(np.array(v, dtype=dtype), 1, casting="unsafe")
        before = step._version
        got = _foreach.tick(step, _foreach.Bumps())
        assert step._data.dtype == dtype and step._data.shape == ()
        assert step._data.tobytes() == want.tobytes(), (dtype, v)
        assert np.array(got, dtype=np.float64).tobytes() == \
            np.array(want.item(), dtype=np.float64).tobytes()
        assert step._version == before + 1
