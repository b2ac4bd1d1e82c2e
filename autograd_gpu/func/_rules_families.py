"""Batching rules for the op families' nodes whose batch dim can simply lead: ops over one
normalized ``dim`` (sort, topk, kthvalue/median/mode along a dim), over normalized ``dims``
(var_mean/std_mean), and ops on the last two dims that batch over leading ones (tril/triu)."""

from __future__ import annotations

from typing import Any, Callable

from ..ops import manip as P
from ..ops import sort as S
from ..ops import stats as ST
from ._batched import front, loop_fallback, rule
from ._rules import along_dim, along_dims


def _unless_scalar(fn: Callable[..., tuple[Any, Any]]) -> Callable[..., tuple[Any, Any]]:
    """``fn``, but per sample for 0-d samples (their ``dim`` 0 has no batched counterpart)."""

    def run(cls: Any, params: dict[str, Any], args: list[Any], bdims: list[Any],
            size: int) -> tuple[Any, Any]:
        if args[0].ndim - (bdims[0] is not None) == 0:
            return loop_fallback(cls, params, args, bdims, size)  # type: ignore[no-any-return]
        return fn(cls, params, args, bdims, size)

    return run


@rule(P.Triangle)
def leading(cls: Any, params: dict[str, Any], args: list[Any], bdims: list[Any],
            size: int) -> tuple[Any, Any]:
    """Ops on the trailing dims that treat leading ones as a batch: batch first."""
    return cls.apply(front(args[0], bdims[0]), **params), 0


rule(S.Sort, S.TopK, S.SelectDim)(_unless_scalar(along_dim))
rule(ST.VarMean)(_unless_scalar(along_dims))
