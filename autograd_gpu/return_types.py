"""Named tuples returned by ops, as ``torch.return_types`` (``max(dim)``, ``sort``, ``topk``, ...).

Each is a tuple subclass with named fields that prints like PyTorch's::

    torch.return_types.max(
    values=tensor([5., 3.]),
    indices=tensor([1, 0]))
"""

from __future__ import annotations

from typing import Any

__all__ = ["aminmax", "cummax", "cummin", "frexp", "geqrf", "histogram", "histogramdd", "kthvalue",
           "linalg_cholesky_ex", "linalg_eig", "linalg_eigh", "linalg_inv_ex", "linalg_lstsq",
           "linalg_qr", "linalg_slogdet",
           "linalg_solve_ex", "linalg_svd", "max", "median", "min", "mode", "nanmedian", "qr",
           "slogdet", "sort", "svd", "topk", "triangular_solve"]


class _StructSeq(tuple):
    """Base of the return types: a tuple whose items are also attributes named in ``_fields``."""

    __slots__ = ()
    _fields: tuple[str, ...] = ()

    def __new__(cls, *args: Any) -> _StructSeq:
        # NOTE: PyTorch's constructor takes one sequence (``max((values, indices))``); library
        # code may also pass the fields positionally (``max(values, indices)``).
        items = tuple(args[0]) if len(args) == 1 else args
        if len(items) != len(cls._fields):
            raise TypeError(f"torch.return_types.{cls.__name__}() takes a {len(cls._fields)}-sequence "
                            f"({len(items)}-sequence given)")
        return super().__new__(cls, items)

    @property
    def n_fields(self) -> int:
        return len(self._fields)

    n_sequence_fields = n_fields

    def __repr__(self) -> str:
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(self._fields, self))
        return f"torch.return_types.{type(self).__name__}(\n{body})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (tuple(self),))


def _field(i: int) -> property:
    def get(self: tuple) -> Any:
        return tuple.__getitem__(self, i)

    return property(get)


def _make(name: str, fields: tuple[str, ...]) -> type[_StructSeq]:
    ns: dict[str, Any] = {"__slots__": (), "_fields": fields, "__module__": __name__,
                          "__qualname__": name}
    for i, f in enumerate(fields):
        ns[f] = _field(i)
    return type(name, (_StructSeq,), ns)


_VALUES_INDICES = ("values", "indices")
max = _make("max", _VALUES_INDICES)  # noqa: A001  (PyTorch's name)
min = _make("min", _VALUES_INDICES)  # noqa: A001
sort = _make("sort", _VALUES_INDICES)
topk = _make("topk", _VALUES_INDICES)
kthvalue = _make("kthvalue", _VALUES_INDICES)
median = _make("median", _VALUES_INDICES)
nanmedian = _make("nanmedian", _VALUES_INDICES)
mode = _make("mode", _VALUES_INDICES)
cummax = _make("cummax", _VALUES_INDICES)
cummin = _make("cummin", _VALUES_INDICES)
aminmax = _make("aminmax", ("min", "max"))
frexp = _make("frexp", ("mantissa", "exponent"))
slogdet = _make("slogdet", ("sign", "logabsdet"))
linalg_slogdet = _make("linalg_slogdet", ("sign", "logabsdet"))
linalg_inv_ex = _make("linalg_inv_ex", ("inverse", "info"))
linalg_solve_ex = _make("linalg_solve_ex", ("result", "info"))
linalg_cholesky_ex = _make("linalg_cholesky_ex", ("L", "info"))
linalg_qr = _make("linalg_qr", ("Q", "R"))
qr = _make("qr", ("Q", "R"))
linalg_svd = _make("linalg_svd", ("U", "S", "Vh"))
svd = _make("svd", ("U", "S", "V"))
linalg_eig = _make("linalg_eig", ("eigenvalues", "eigenvectors"))
geqrf = _make("geqrf", ("a", "tau"))
linalg_eigh = _make("linalg_eigh", ("eigenvalues", "eigenvectors"))
linalg_lstsq = _make("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))
triangular_solve = _make("triangular_solve", ("solution", "cloned_coefficient"))
histogram = _make("histogram", ("hist", "bin_edges"))
histogramdd = _make("histogramdd", ("hist", "bin_edges"))

# NOTE: kept for callers written before the per-op types existed.
MinMax = max
