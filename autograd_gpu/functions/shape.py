"""Shape functions: reshape/view, squeeze, expand, permute, cat/stack, split, repeat."""

from __future__ import annotations

import builtins
from typing import Any, Sequence

from .. import dtypes
from ..ops import movement as M
from ..ops.util import normalize_dim, normalize_dims
from ..tensor import Size, Tensor


def _broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    n = builtins.max(len(s) for s in shapes)
    out = [1] * n
    for s in shapes:
        s = (1,) * (n - len(s)) + tuple(s)
        for i, d in enumerate(s):
            if d != 1:
                if out[i] != 1 and out[i] != d:
                    raise RuntimeError(
                        f"The size of tensor a ({out[i]}) must match the size of tensor b ({d}) at "
                        f"non-singleton dimension {i}"
                    )
                out[i] = d
    return tuple(out)


def broadcast_shapes(*shapes: Sequence[int]) -> Size:
    return Size(_broadcast_shapes(*shapes))


# ---- shape -----------------------------------------------------------------------------------

def _shape_arg(shape: tuple[Any, ...]) -> tuple[int, ...]:
    if len(shape) == 1 and not isinstance(shape[0], int):
        shape = tuple(shape[0])
    return tuple(int(s) for s in shape)


def _infer_shape(shape: tuple[int, ...], numel: int) -> tuple[int, ...]:
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise RuntimeError(f"invalid shape dimension {s}")
            known *= s
    if -1 in shape:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '[{', '.join(map(str, shape))}]' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    elif known != numel:
        raise RuntimeError(f"shape '[{', '.join(map(str, shape))}]' is invalid for input of size {numel}")
    return shape


def reshape(input: Tensor, *shape: Any) -> Tensor:  # noqa: A002
    """``input`` with a new shape: a view when strides allow, else a copy."""
    s = _infer_shape(_shape_arg(shape), input.numel())
    return M.Reshape.apply(input, shape=s)


def view(input: Tensor, *shape: Any) -> Tensor:  # noqa: A002
    """A view of ``input`` with a new shape; errors when the strides don't allow one."""
    if len(shape) == 1 and isinstance(shape[0], dtypes.dtype):
        raise NotImplementedError("view(dtype) is not supported")
    s = _infer_shape(_shape_arg(shape), input.numel())
    return M.Reshape.apply(input, shape=s, copy_ok=False)


def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:  # noqa: A002
    if input.ndim == 0:
        return reshape(input, 1)
    s, e = normalize_dim(start_dim, input.ndim), normalize_dim(end_dim, input.ndim)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    shape = input.shape
    n = 1
    for d in shape[s:e + 1]:
        n *= d
    return reshape(input, shape[:s] + (n,) + shape[e + 1:])


def unflatten(input: Tensor, dim: int, sizes: Any) -> Tensor:  # noqa: A002
    """Dimension ``dim`` viewed as ``sizes`` (one of them may be -1), with PyTorch's errors."""
    d = normalize_dim(dim, input.ndim)
    sizes = tuple(sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    if sizes.count(-1) > 1:
        raise RuntimeError("unflatten got an unexpected error:\nonly one dimension can be "
                           "inferred")
    n, known = input.shape[d], 1
    for s in sizes:
        known *= s if s != -1 else 1
    if (known != n) if -1 not in sizes else (known == 0 or n % known):
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size "
                           f"of dim {d} ({n}) in the input tensor")
    sizes = _infer_shape(sizes, n)
    return view(input, input.shape[:d] + sizes + input.shape[d + 1:])


def squeeze(input: Tensor, dim: Any = None) -> Tensor:  # noqa: A002
    if dim is None:
        dims = tuple(i for i, s in enumerate(input.shape) if s == 1)
        return M.Squeeze.apply(input, dims=dims, name="SqueezeBackward0")
    dims = normalize_dims(dim, input.ndim) if input.ndim else ()
    dims = tuple(d for d in dims if input.shape[d] == 1)
    name = "SqueezeBackward1" if isinstance(dim, int) else "SqueezeBackward2"
    return M.Squeeze.apply(input, dims=dims, name=name)


def unsqueeze(input: Tensor, dim: int) -> Tensor:  # noqa: A002
    return M.Unsqueeze.apply(input, dim=normalize_dim(dim, input.ndim + 1))


def expand(input: Tensor, *sizes: Any) -> Tensor:  # noqa: A002
    """A broadcast view of ``input`` to ``sizes`` (-1 keeps a dimension)."""
    target = expanded_shape(input, _shape_arg(sizes))
    return M.Expand.apply(input, shape=target)


def expanded_shape(input: Tensor, shape: tuple[int, ...]) -> tuple[int, ...]:  # noqa: A002
    """The shape ``input.expand(shape)`` has, or PyTorch's error when it cannot expand."""
    from ..autograd.node import _type_str

    nd = input.ndim
    if len(shape) < nd:
        raise RuntimeError(
            f"expand({_type_str(input)}{{[{', '.join(map(str, input.shape))}]}}, size=[{', '.join(map(str, shape))}]): "
            "the number of sizes provided (%d) must be greater or equal to the number of dimensions in the tensor (%d)"
            % (len(shape), nd)
        )
    lead = len(shape) - nd
    out = []
    for i in range(len(shape) - 1, -1, -1):  # NOTE: from the last dim, as PyTorch checks
        s = shape[i]
        if i < lead:
            if s < 0:
                raise RuntimeError(f"The expanded size of the tensor ({s}) isn't allowed in a leading, non-existing dimension {i}")
            out.append(s)
            continue
        have = input.shape[i - lead]
        if s == -1:
            s = have
        if have != s and have != 1:
            raise RuntimeError(
                f"The expanded size of the tensor ({s}) must match the existing size ({have}) at "
                f"non-singleton dimension {i}.  Target sizes: [{', '.join(map(str, shape))}].  "
                f"Tensor sizes: [{', '.join(map(str, input.shape))}]"
            )
        out.append(s)
    return tuple(out[::-1])


def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:  # noqa: A002
    nd = input.ndim
    d0, d1 = normalize_dim(dim0, nd), normalize_dim(dim1, nd)
    axes = list(range(nd))
    if nd:
        axes[d0], axes[d1] = axes[d1], axes[d0]
    return M.Permute.apply(input, axes=tuple(axes), name="TransposeBackward0")


swapaxes = transpose


def permute(input: Tensor, dims: Any, name: str = "PermuteBackward0") -> Tensor:  # noqa: A002
    dims = _shape_arg(tuple(dims)) if not isinstance(dims, int) else (dims,)
    nd = input.ndim
    if len(dims) != nd:
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does not match the "
            f"length of the desired ordering of dimensions i.e. input.dim() = {nd} is not equal "
            f"to len(dims) = {len(dims)}"
        )
    axes = tuple(normalize_dim(d, nd) for d in dims)
    if len(set(axes)) != len(axes):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return M.Permute.apply(input, axes=axes, name=name)


def movedim(input: Tensor, source: Any, destination: Any) -> Tensor:  # noqa: A002
    """``input`` with dims ``source`` moved to positions ``destination`` (a view); the other
    dims keep their order."""
    src = (source,) if isinstance(source, int) else tuple(source)
    dst = (destination,) if isinstance(destination, int) else tuple(destination)
    if len(src) != len(dst):
        raise RuntimeError(
            "movedim: Invalid source or destination dims: source "
            f"({list(src)} dims) should contain the same number of dims as destination "
            f"({list(dst)} dims)"
        )
    nd = input.ndim
    src = tuple(normalize_dim(d, nd) for d in src)
    dst = tuple(normalize_dim(d, nd) for d in dst)
    order: list[int | None] = [None] * nd
    for s_, d_ in zip(src, dst):
        order[d_] = s_
    rest = iter(d for d in range(nd) if d not in src)
    axes = tuple(next(rest) if o is None else o for o in order)
    if axes == tuple(range(nd)):
        return input.view(input.shape) if nd else input.view(())
    return M.Permute.apply(input, axes=axes)


moveaxis = movedim


def select(input: Tensor, dim: int, index: int) -> Tensor:  # noqa: A002
    """The slice ``index`` along ``dim``, without that dim (a view)."""
    d = normalize_dim(dim, input.ndim)
    return input[(slice(None),) * d + (index,)]


def narrow(input: Tensor, dim: int, start: int, length: int) -> Tensor:  # noqa: A002
    """``length`` entries of ``dim`` from ``start`` (a view)."""
    d = normalize_dim(dim, input.ndim)
    size = input.shape[d]
    if start < 0:
        start += size
    if not 0 <= start <= size or length < 0 or start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return input[(slice(None),) * d + (slice(start, start + length),)]


def t(input: Tensor) -> Tensor:  # noqa: A002
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return M.Permute.apply(input, axes=_T_AXES[input.ndim], name="TBackward0")


_T_AXES = ((), (0,), (1, 0))  # t()'s permutation by ndim


def contiguous(input: Tensor) -> Tensor:  # noqa: A002
    if input.is_contiguous():
        return input
    return M.Contiguous.apply(input)


def cat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Concatenate along ``dim``; every other dimension must match."""
    tensors = list(tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if t.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    # NOTE: PyTorch skips 1-D empty tensors (legacy behaviour); when all are, ``dim`` is not
    # checked.
    ref = next((t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)), tensors[0])
    nd = ref.ndim
    d = normalize_dim(dim, nd) if ref.shape != (0,) else 0
    skipped = tuple(t.ndim == 1 and t.shape[0] == 0 and t is not ref for t in tensors)
    for i, t in enumerate(tensors):
        if skipped[i]:
            continue
        if t.ndim != nd:
            raise RuntimeError(
                f"Tensors must have same number of dimensions: got {nd} and {t.ndim}"
            )
        for j in range(nd):
            if j != d and t.shape[j] != ref.shape[j]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {d}. Expected size "
                    f"{ref.shape[j]} but got size {t.shape[j]} for tensor number {i} in the list."
                )
    # NOTE: the skipped tensors still join the graph (their gradient is empty, not None) and
    # the dtype promotion, as in PyTorch.
    return M.Cat.apply(*_promote_all(tensors), dim=d, skipped=skipped)


concat = concatenate = cat


def stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Stack equal-shaped tensors along a new dimension ``dim``."""
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, t in enumerate(tensors[1:], 1):
        if t.shape != tensors[0].shape:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(tensors[0].shape)} at "
                f"entry 0 and {list(t.shape)} at entry {i}"
            )
    d = normalize_dim(dim, tensors[0].ndim + 1)
    return M.Stack.apply(*_promote_all(tensors), dim=d)


def _promote_all(tensors: list[Tensor]) -> list[Tensor]:
    """``tensors`` cast to their common dtype (``promote_types`` over all of them)."""
    out_dtype = tensors[0].dtype
    for t in tensors[1:]:
        out_dtype = dtypes.promote_types(out_dtype, t.dtype)
    return [t if t.dtype is out_dtype else t.to(out_dtype) for t in tensors]


def split(input: Tensor, split_size_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:  # noqa: A002
    """Pieces of ``split_size`` (the last may be smaller), or of the listed sizes."""
    d = normalize_dim(dim, input.ndim)
    n = input.shape[d]
    if isinstance(split_size_or_sections, int):
        size = split_size_or_sections
        if size < 0:
            raise RuntimeError(f"split expects split_size be non-negative, but got split_size={size}")
        if size == 0:
            if n != 0:
                raise RuntimeError(
                    f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}"
                )
            sizes = [0]
        else:
            sizes = [size] * (n // size) + ([n % size] if n % size else [])
            if not sizes:
                sizes = [0]
        name = "SplitBackward0"
    else:
        sizes = [int(s) for s in split_size_or_sections]
        if builtins.sum(sizes) != n:
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size at "
                f"dimension {d}), but got split_sizes={sizes}"
            )
        name = "SplitWithSizesBackward0"
    return M.Split.apply(input, sizes=sizes, dim=d, name=name)  # type: ignore[no-any-return]


def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:  # noqa: A002
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    d = normalize_dim(dim, input.ndim)
    n = input.shape[d]
    size = -(-n // chunks) if n else 0
    if size == 0:
        return split(input, [0] * 1 if n == 0 else [n], d) if n == 0 else (input,)
    return split(input, size, d)


def unbind(input: Tensor, dim: int = 0) -> tuple[Tensor, ...]:  # noqa: A002
    d = normalize_dim(dim, input.ndim)
    out = M.Split.apply(input, sizes=[1] * input.shape[d], dim=d, name="UnbindBackward0", squeeze=True)
    return out if isinstance(out, tuple) else (out,)


def repeat(input: Tensor, *sizes: Any) -> Tensor:  # noqa: A002
    reps = _shape_arg(sizes)
    if len(reps) < input.ndim:
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor"
        )
    return M.Repeat.apply(input, reps=reps)
