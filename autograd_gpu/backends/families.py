"""The op families' backend entries in one mixin (one module per family, named as in
``functions/`` and ``ops/``), mixed into both backends."""

from __future__ import annotations

from .scan import ScanBackend
from .sort import SortBackend
from .pointwise import PointwiseBackend
from .manip import ManipBackend
from .scatter import ScatterBackend
from .sampling import SamplingBackend
from .stats import StatsBackend
from .products import ProductsBackend
from .decomp import DecompBackend
from .fft import FftBackend
from .norm import NormBackend
from .rnn import RnnBackend
from .attention import AttentionBackend


class Families(
    ScanBackend, SortBackend, PointwiseBackend, ManipBackend, ScatterBackend,
    SamplingBackend, StatsBackend, ProductsBackend, DecompBackend, FftBackend, NormBackend,
    RnnBackend, AttentionBackend,
):
    """Every family's primitives."""
