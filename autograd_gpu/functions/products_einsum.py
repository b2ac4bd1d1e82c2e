"""``einsum`` (exported through ``products``): PyTorch's equation and sublist forms, parsed and
checked as PyTorch parses them, then computed with differentiable ops only, so gradients (and
double backward) and the CUDA path come from them:

1. repeated subscripts within an operand take a diagonal (DiagonalBackward0);
2. size-1 dimensions are dropped (they broadcast: an operand constant along a subscript is as
   if it lacked it) and come back as ones in the result;
3. a subscript in one operand only, and not in the output, is summed out;
4. operands are contracted left to right, two at a time: subscripts both need later are batch
   dims, those only they share are summed by one ``bmm`` (``mm`` without batch); with nothing to
   sum, a broadcast multiply;
5. the result is permuted to the output's order.
"""

from __future__ import annotations

from typing import Any, Sequence

from .. import dtypes
from ..tensor import Tensor
from .arith import _type_name

_ELL = -1  # an ellipsis in a subscript list
_N_LABELS = 52  # A-Z, a-z; the ellipsis' dims are ids 52, 53, ...


def einsum(*args: Any) -> Tensor:
    """Sum of products over the subscripts of ``equation`` (``"bij,bjk->bik"``), as
    ``torch.einsum``.

    Forms: ``einsum(equation, *operands)``, ``einsum(equation, [operands])`` and the sublist
    form ``einsum(op1, [0, 1], op2, [1, 2], [0, 2])`` (ints in [0, 52), ``...`` as
    ``Ellipsis``). Without ``->`` the output is the ellipsis dims, then the subscripts that
    appear once, in alphabetical order (upper case first). Dimensions of size 1 broadcast.

    Example:
        >>> einsum("ij,jk->ik", ones(2, 3), ones(3, 4)).shape
        torch.Size([2, 4])
    """
    if len(args) < 2:
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
    if isinstance(args[0], Tensor):
        equation = ",".join("".join(_sublist_label(s) for s in sub) for sub in args[1::2])
        if len(args) % 2:
            equation += "->" + "".join(_sublist_label(s) for s in args[-1])
            operands: Sequence[Any] = args[:-1:2]
        else:
            operands = args[::2]
    else:
        equation, operands = args[0], args[1:]
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
            operands = operands[0]
    for i, op in enumerate(operands):
        if not isinstance(op, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 1, but got "
                            f"{type(op).__name__}")
    return _einsum(equation, list(operands))


def _sublist_label(s: Any) -> str:
    if s is Ellipsis:
        return "..."
    if isinstance(s, int) and 0 <= s < 26:
        return chr(ord("A") + s)
    if isinstance(s, int) and 26 <= s < _N_LABELS:
        return chr(ord("a") + s - 26)
    raise ValueError("einsum(): subscript in subscript list is not within the valid range "
                     "[0, 52)")


def _label_id(ch: str) -> int:
    return ord(ch) - ord("A") if ch <= "Z" else ord(ch) - ord("a") + 26


def _label_char(i: int) -> str:
    return chr(ord("A") + i) if i < 26 else chr(ord("a") + i - 26)


def _is_label(ch: str) -> bool:
    return ch.isascii() and ch.isalpha()


def _parse_inputs(lhs: str, n_ops: int) -> list[list[int]]:
    labels: list[list[int]] = [[] for _ in range(n_ops)]
    cur, ell, i = 0, False, 0
    while i < len(lhs):
        ch = lhs[i]
        if ch == ".":
            if ell:
                raise RuntimeError(f"einsum(): found '.' for operand {cur} for which an ellipsis "
                                   "was already found")
            if not (i + 2 < len(lhs) and lhs[i + 1] == "." and lhs[i + 2] == "."):
                raise RuntimeError(f"einsum(): found '.' for operand {cur} that is not part of "
                                   "any ellipsis")
            labels[cur].append(_ELL)
            ell = True
            i += 2
        elif ch == ",":
            cur += 1
            if cur >= n_ops:
                raise RuntimeError("einsum(): fewer operands were provided than specified in the "
                                   "equation")
            ell = False
        elif ch != " ":
            if not _is_label(ch):
                raise RuntimeError(f"einsum(): invalid subscript given at index {i} in the "
                                   "equation string, subscripts must be in [a-zA-Z]")
            labels[cur].append(_label_id(ch))
        i += 1
    if cur != n_ops - 1:
        raise RuntimeError("einsum(): more operands were provided than specified in the "
                           "equation")
    return labels


def _parse_output(rhs: str, offset: int, count: list[int], ell_dims: int) -> list[int]:
    """The output's dim ids (``offset``: where ``rhs`` starts in the equation)."""
    out: list[int] = []
    ell, i = False, 0
    while i < len(rhs):
        ch = rhs[i]
        if ch == ".":
            if ell:
                raise RuntimeError("einsum(): found '.' for output but an ellipsis (...) was "
                                   "already found")
            if not (i + 2 < len(rhs) and rhs[i + 1] == "." and rhs[i + 2] == "."):
                raise RuntimeError("einsum(): found '.' for output that is not part of any "
                                   "ellipsis (...)")
            out += range(_N_LABELS, _N_LABELS + ell_dims)
            ell = True
            i += 2
        elif ch != " ":
            if not _is_label(ch):
                raise RuntimeError(f"einsum(): invalid subscript given at index {offset + i} in "
                                   "the equation string, subscripts must be in [a-zA-Z]")
            k = _label_id(ch)
            if not count[k] or k in out:
                why = "appears more than once in the output" if k in out else \
                    "does not appear in the equation for any input operand"
                raise RuntimeError(f"einsum(): output subscript {ch} {why}")
            out.append(k)
        i += 1
    return out


def _einsum(equation: str, operands: list[Tensor]) -> Tensor:
    arrow = equation.find("->")
    lhs = equation if arrow < 0 else equation[:arrow]
    op_labels = _parse_inputs(lhs, len(operands))
    count = [0] * _N_LABELS
    ell_dims = 0
    for i, (op, labels) in enumerate(zip(operands, op_labels)):
        n = len(labels) - (_ELL in labels)
        for k in labels:
            if k == _ELL:
                ell_dims = max(ell_dims, op.ndim - n)
            else:
                count[k] += 1
        if _ELL in labels and n > op.ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({n}) is more "
                               f"than the number of dimensions ({op.ndim}) for operand {i}")
        if _ELL not in labels and n != op.ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({n}) does "
                               f"not match the number of dimensions ({op.ndim}) for operand {i} "
                               "and no ellipsis was given")
    if arrow < 0:
        out_ids = list(range(_N_LABELS, _N_LABELS + ell_dims)) + \
            [k for k in range(_N_LABELS) if count[k] == 1]
    else:
        out_ids = _parse_output(equation[arrow + 2:], arrow + 2, count, ell_dims)
    sizes: dict[int, int] = {}
    ops = [_align(i, op, labels, ell_dims, sizes) for i, (op, labels) in
           enumerate(zip(operands, op_labels))]
    out_shape = tuple(sizes.get(k, 1) for k in out_ids)
    # size-1 dims broadcast: drop them (the result gets them back from out_shape)
    ops = [_squeeze(op, ids) for op, ids in ops]
    keep = set(out_ids)
    result, ids = ops[0]
    if len(ops) == 1:
        result, ids = _sum_out(result, ids, keep)
    for j in range(1, len(ops)):
        later = keep.union(*(set(i) for _, i in ops[j + 1:]))
        result, ids = _contract(result, ids, *ops[j], later)
    order = [ids.index(k) for k in out_ids if k in ids]
    if order != list(range(len(order))) or result is operands[0]:
        result = result.permute(*order)
    return result.reshape(out_shape) if tuple(result.shape) != out_shape else result


def _align(i: int, op: Tensor, labels: list[int], ell_dims: int,
           sizes: dict[int, int]) -> tuple[Tensor, list[int]]:
    """Operand ``i`` with one dim per distinct id (diagonals of repeated subscripts taken),
    and its dim ids; the ids' sizes checked (size 1 broadcasts) and recorded in ``sizes``."""
    from ..ops.products import Diagonal

    ids: list[int] = []
    dim = 0
    for k in labels:
        if k == _ELL:
            n = op.ndim - (len(labels) - 1)
            for j in range(ell_dims - n, ell_dims):
                s = op.shape[dim]
                seen = sizes.get(_N_LABELS + j, 1)
                if s != 1:
                    if seen not in (1, s):
                        raise RuntimeError(
                            f"einsum(): dimension {dim} covered by ellipsis in operand {i}has "
                            f"size {s} which does not broadcast with previously seen ellipsis "
                            f"with size {seen} for the respective dimension")
                    sizes[_N_LABELS + j] = s
                ids.append(_N_LABELS + j)
                dim += 1
        elif k not in ids:
            s = op.shape[dim]
            seen = sizes.get(k, 1)
            if s != 1:
                if seen not in (1, s):
                    raise RuntimeError(
                        f"einsum(): subscript {_label_char(k)} has size {s} for operand {i} "
                        f"which does not broadcast with previously seen size {seen}")
                sizes[k] = s
            ids.append(k)
            dim += 1
        else:
            prev = ids.index(k)
            if op.shape[dim] != op.shape[prev]:
                raise RuntimeError(
                    f"einsum(): subscript {_label_char(k)} is repeated for operand {i} but the "
                    f"sizes don't match, {op.shape[dim]} != {op.shape[prev]}")
            op = Diagonal.apply(op, dim1=prev, dim2=dim)
    for k in ids:
        sizes.setdefault(k, 1)
    return op, ids


def _squeeze(op: Tensor, ids: list[int]) -> tuple[Tensor, list[int]]:
    if 1 not in op.shape:
        return op, ids
    keep = [d for d, s in enumerate(op.shape) if s != 1]
    return op.reshape(tuple(op.shape[d] for d in keep)), [ids[d] for d in keep]


def _sum_out(t: Tensor, ids: list[int], keep: set[int]) -> tuple[Tensor, list[int]]:
    """``t`` summed over the dims whose ids are not in ``keep``."""
    dims = [d for d, k in enumerate(ids) if k not in keep]
    if not dims:
        return t, ids
    return t.sum(dims), [k for k in ids if k in keep]


def _contract(a: Tensor, la: list[int], b: Tensor, lb: list[int],
              keep: set[int]) -> tuple[Tensor, list[int]]:
    """The product of ``a`` and ``b`` summed over the ids they share and ``keep`` lacks."""
    a, la = _sum_out(a, la, keep | set(lb))
    b, lb = _sum_out(b, lb, keep | set(la))
    batch = [k for k in la if k in lb and k in keep]
    summed = [k for k in la if k in lb and k not in keep]
    only_a = [k for k in la if k not in lb]
    only_b = [k for k in lb if k not in la]
    size = dict(zip(la, a.shape)) | dict(zip(lb, b.shape))
    sb = tuple(size[k] for k in batch)
    sa = tuple(size[k] for k in only_a)
    so = tuple(size[k] for k in only_b)
    if not summed:  # NOTE: nothing to sum: a broadcast multiply, as PyTorch's
        x = _arrange(a, la, batch + only_a, sb + sa + (1,) * len(so))
        y = _arrange(b, lb, batch + only_b, sb + (1,) * len(sa) + so)
        return x * y, batch + only_a + only_b
    # NOTE: PyTorch multiplies with bmm always: its checks
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected scalar type {_type_name(a.dtype)} but found "
                           f"{_type_name(b.dtype)}")
    if a.dtype is dtypes.bool:
        raise NotImplementedError("\"bmm\" not implemented for 'Bool'")
    from .linalg import bmm, mm

    nb, na, no, nk = _numel(sb), _numel(sa), _numel(so), _numel(tuple(size[k] for k in summed))
    if nb == 1:
        out = mm(_arrange(a, la, only_a + summed, (na, nk)),
                 _arrange(b, lb, summed + only_b, (nk, no)))
    else:
        out = bmm(_arrange(a, la, batch + only_a + summed, (nb, na, nk)),
                  _arrange(b, lb, batch + summed + only_b, (nb, nk, no)))
    shape = sb + sa + so
    return (out.reshape(shape) if tuple(out.shape) != shape else out), batch + only_a + only_b


def _arrange(t: Tensor, ids: list[int], order: list[int], shape: tuple[int, ...]) -> Tensor:
    """``t`` with its dims in ``order`` (by id), reshaped to ``shape``."""
    perm = [ids.index(k) for k in order]
    if perm != list(range(len(perm))):
        t = t.permute(*perm)
    return t.reshape(shape) if tuple(t.shape) != shape else t


def _numel(shape: tuple[int, ...]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n
