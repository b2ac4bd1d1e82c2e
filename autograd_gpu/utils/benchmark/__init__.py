"""``torch.utils.benchmark``: ``Timer`` (``timeit``, ``blocked_autorange``,
``adaptive_autorange``), ``Measurement`` and ``Compare``, as in PyTorch, on our tensors.

Example:
    >>> from autograd_gpu.utils import benchmark
    >>> m = benchmark.Timer("x * 2", globals={"x": ones(8)}).blocked_autorange(min_run_time=0.01)
    >>> m.median > 0
    True
"""

from __future__ import annotations

from .utils import common, compare, timer
from .utils.common import (
    Measurement, TaskSpec, ordered_unique, select_unit, set_torch_threads, trim_sigfig,
    unit_to_english,
)
from .utils.compare import Colorize, Compare
from .utils.timer import Language, Timer

__all__ = ["Colorize", "Compare", "Language", "Measurement", "TaskSpec", "Timer", "common",
           "compare", "ordered_unique", "select_unit", "set_torch_threads", "timer",
           "trim_sigfig", "unit_to_english"]
