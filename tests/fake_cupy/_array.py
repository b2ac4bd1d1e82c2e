"""The fake ``cupy.ndarray``: a NumPy array behind CuPy's strictness.

It wraps (never subclasses) a ``numpy.ndarray``, so that ``isinstance(x, numpy.ndarray)`` is
False, as on a GPU, and every way of reaching host memory by accident fails as it would with CuPy:

- NumPy arrays as operands of ufuncs and functions raise CuPy's ``TypeError('Unsupported type
  <class 'numpy.ndarray'>')``; ``numpy.asarray(x)`` raises CuPy's "Implicit conversion" error.
- Reductions and scalar indexing give 0-d arrays (``x[0]`` is a view, as in CuPy), never NumPy
  scalars; ``.get()`` and ``cupy.asnumpy`` give host *copies*.
- There is no ``__array_interface__``, no ``flags.writeable``; there is ``.data.ptr``,
  ``.device``, ``__cuda_array_interface__`` and ``__dlpack_device__() == (2, 0)``.
- Every array that owns memory takes it from the allocator set with ``cupy.cuda.set_allocator``
  (CuPy's default memory pool unless changed), so pool counters and out-of-memory behave.

NumPy never warns here (CuPy has no floating-point error state): every computation runs under
``numpy.errstate(all="ignore")``.
"""

from __future__ import annotations

import numbers
from typing import Any, Callable

import numpy as np

from . import _graph

IMPLICIT_MSG = ("Implicit conversion to a NumPy array is not allowed. Please use `.get()` to "
                "construct a NumPy array explicitly.")

_COMPARISONS = ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal")

# Scalars a CuPy kernel accepts next to arrays (CuPy's ``scalar_to_numpy_scalar``).
_SCALARS = (bool, int, float, complex, np.generic)


def unsupported(x: Any) -> TypeError:
    return TypeError(f"Unsupported type {type(x)}")


# ---- memory -------------------------------------------------------------------------------

class Memory:
    """One allocation (CuPy's ``BaseMemory``): ``size`` bytes, given back to ``owner`` (a pool,
    or None for unpooled memory) when the last array using it is gone."""

    _next_ptr = 0x7F0000000000

    def __init__(self, size: int, owner: Any = None) -> None:
        self.size = size
        self.device_id = 0
        self.ptr = Memory._next_ptr
        Memory._next_ptr += max(size, 512)
        self._owner = owner

    def __del__(self) -> None:
        owner = self._owner
        if owner is not None:
            self._owner = None
            try:
                owner._release(self.size)
            except Exception:  # noqa: BLE001  (interpreter shutdown)
                pass


class MemoryPointer:
    """CuPy's ``MemoryPointer``: ``mem`` (the allocation) and ``ptr`` (an address in it)."""

    def __init__(self, mem: Memory, offset: int = 0, ptr: int | None = None) -> None:
        self.mem = mem
        self.ptr = mem.ptr + offset if ptr is None else ptr
        self.device_id = mem.device_id

    @property
    def device(self) -> Any:
        from ._cuda import Device

        return Device(self.device_id)

    def __int__(self) -> int:
        return self.ptr

    def __add__(self, offset: int) -> MemoryPointer:
        return MemoryPointer(self.mem, ptr=self.ptr + offset)

    def __repr__(self) -> str:
        return f"<MemoryPointer 0x{self.ptr:x} device={self.device_id} mem={self.mem!r}>"


# The current allocator (``cupy.cuda.set_allocator`` sets it; ``_cuda`` installs the pool's).
ALLOCATOR: list[Callable[[int], Any]] = []


def allocate(nbytes: int) -> Memory:
    """``nbytes`` from the current allocator."""
    return ALLOCATOR[0](nbytes).mem  # type: ignore[no-any-return]


class Flags:
    """CuPy's ``flags``: c_contiguous, f_contiguous and owndata only (no ``writeable``)."""

    __slots__ = ("c_contiguous", "f_contiguous", "owndata")

    def __init__(self, c: bool, f: bool, own: bool) -> None:
        self.c_contiguous, self.f_contiguous, self.owndata = c, f, own

    def __getitem__(self, name: str) -> bool:
        key = {"C_CONTIGUOUS": "c_contiguous", "F_CONTIGUOUS": "f_contiguous",
               "OWNDATA": "owndata"}.get(name)
        if key is None:
            raise KeyError(f"{name} is not defined for cupy.ndarray.flags")
        return bool(getattr(self, key))

    def __repr__(self) -> str:
        return (f"  C_CONTIGUOUS : {self.c_contiguous}\n  F_CONTIGUOUS : {self.f_contiguous}\n"
                f"  OWNDATA : {self.owndata}")


# ---- wrapping -----------------------------------------------------------------------------

def _root(a: Any) -> Any:
    """The object at the end of ``a``'s chain of ``.base``s (NumPy's views, ``as_strided``'s
    DummyArray): the owner of the memory that ``a`` views."""
    while True:
        b = getattr(a, "base", None)
        if b is None or isinstance(b, (bytes, memoryview)):
            return a
        a = b


def new(a: np.ndarray) -> ndarray:
    """A fake array owning ``a`` (allocated through the current allocator)."""
    out = object.__new__(ndarray)
    out._a = a
    out._owner = None
    out._mem = allocate(a.nbytes) if a.nbytes else None
    return out


def wrap(r: Any, srcs: tuple[Any, ...] = ()) -> Any:
    """NumPy results as fake arrays: arrays viewing a source's memory become views of that
    source (``.base`` is its owner), other arrays and NumPy scalars own fresh device memory;
    tuples and lists are wrapped element-wise; anything else passes through."""
    if isinstance(r, np.ndarray):
        root = None
        for s in srcs:
            if isinstance(s, ndarray):
                if r is s._a:
                    return s
                if root is None:
                    root = _root(r) if r.base is not None else r
                if root is _root(s._a):
                    out = object.__new__(ndarray)
                    out._a = r
                    out._owner = s._owner if s._owner is not None else s
                    out._mem = None
                    return out
        return new(r)
    if isinstance(r, np.generic):
        return new(np.asarray(r))
    if isinstance(r, tuple):
        return tuple(wrap(x, srcs) for x in r)
    if isinstance(r, list):
        return [wrap(x, srcs) for x in r]
    return r


def unwrap(x: Any, srcs: list[Any]) -> Any:
    """Arguments for NumPy: fake arrays become their NumPy arrays (and are noted in ``srcs``);
    a NumPy array anywhere raises CuPy's TypeError; lists and tuples are unwrapped inside."""
    if isinstance(x, ndarray):
        srcs.append(x)
        return x._a
    if isinstance(x, np.ndarray):
        raise unsupported(x)
    if isinstance(x, (list, tuple)):
        return type(x)(unwrap(v, srcs) for v in x)
    return x


def kernel_arg(x: Any, srcs: list[Any]) -> Any:
    """An operand of a CuPy ufunc: a fake array or a scalar; anything else is CuPy's TypeError."""
    if isinstance(x, ndarray):
        srcs.append(x)
        return x._a
    if isinstance(x, _SCALARS) and not isinstance(x, np.ndarray):
        return x
    if hasattr(x, "__cuda_array_interface__"):
        from ._cupy import asarray

        a = asarray(x)
        srcs.append(a)
        return a._a
    raise unsupported(x)


def run(name: str, compute: Callable[[], Any], srcs: list[Any]) -> Any:
    """The funnel of the fake's device work: ``compute()`` (NumPy over the NumPy buffers of the
    fake arrays ``srcs``, quietly) with wrapped results; recorded as one step while the current
    stream captures (``_graph.record``)."""
    rec = _graph.CURRENT[0]._capture
    if rec is None:
        with np.errstate(all="ignore"):
            return wrap(compute(), tuple(srcs))
    return _graph.record(rec, name, compute, srcs, wrap)


host_read = _graph.host_read


# NumPy functions that only allocate (no device work to record).
_ALLOCATE_ONLY = frozenset({"empty", "empty_like"})


def call(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``fn`` (a NumPy function) on unwrapped arguments, quietly, with wrapped results."""
    srcs: list[Any] = []
    a = unwrap(args, srcs)
    kw = {k: unwrap(v, srcs) for k, v in kwargs.items()}
    name = getattr(fn, "__name__", "function")
    if name in _ALLOCATE_ONLY:
        with np.errstate(all="ignore"):
            return wrap(fn(*a, **kw), tuple(srcs))
    return run(name, lambda: fn(*a, **kw), srcs)


class Ufunc:
    """A CuPy ufunc over a NumPy one: operands are fake arrays or scalars only."""

    def __init__(self, uf: np.ufunc) -> None:
        self._uf = uf
        self.__name__ = uf.__name__
        self.nin, self.nout, self.nargs = uf.nin, uf.nout, uf.nargs
        self.types = uf.types

    def __repr__(self) -> str:
        return f"<ufunc '{self.__name__}'>"

    def _run(self, method: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
             n_operands: int) -> Any:
        srcs: list[Any] = []
        ops = [kernel_arg(x, srcs) for x in args[:n_operands]]
        rest = unwrap(tuple(args[n_operands:]), srcs)
        kw = {k: unwrap(v, srcs) for k, v in kwargs.items()}
        if isinstance(kw.get("out"), np.ndarray):
            kw["out"] = (kw["out"],)
        return run(self.__name__, lambda: method(*ops, *rest, **kw), srcs)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._run(self._uf, args, kwargs, self.nin)

    def reduce(self, *args: Any, **kwargs: Any) -> Any:
        return self._run(self._uf.reduce, args, kwargs, 1)

    def accumulate(self, *args: Any, **kwargs: Any) -> Any:
        return self._run(self._uf.accumulate, args, kwargs, 1)

    def outer(self, *args: Any, **kwargs: Any) -> Any:
        return self._run(self._uf.outer, args, kwargs, 2)

    def at(self, a: Any, indices: Any, b: Any = None) -> None:
        """``add.at`` only, with ``scatter_add``'s dtype limits (as in CuPy)."""
        if not isinstance(a, ndarray):
            raise unsupported(a)
        if self.__name__ != "add":
            raise NotImplementedError(f"the fake cupy has {self.__name__}.at only for add")
        scatter(a, indices, 1 if b is None else b, "add")


_UFUNCS: dict[str, Ufunc] = {}


def ufunc(name: str) -> Ufunc:
    u = _UFUNCS.get(name)
    if u is None:
        u = _UFUNCS[name] = Ufunc(getattr(np, name))
    return u


# ---- indexing -----------------------------------------------------------------------------

def index_key(key: Any, srcs: list[Any]) -> Any:
    """An index for NumPy. CuPy takes fake arrays, NumPy arrays and lists in an index (it
    copies host ones to the device), so only fake arrays need unwrapping."""
    if isinstance(key, ndarray):
        srcs.append(key)
        return key._a
    if isinstance(key, tuple):
        return tuple(index_key(k, srcs) for k in key)
    if isinstance(key, list):
        return [index_key(k, srcs) for k in key]
    return key


def wrap_out_of_range(shape: tuple[int, ...], key: Any) -> Any:
    """The key with its integer-array entries taken modulo their dimension's size: CuPy wraps
    out-of-range fancy indices around (its documented difference from NumPy, which raises)."""
    parts = key if isinstance(key, tuple) else (key,)
    arrays = [np.asarray(p) if isinstance(p, (np.ndarray, list)) else None for p in parts]

    def width(p: Any, arr: Any) -> int:
        if p is None or p is Ellipsis:
            return 0
        return arr.ndim if arr is not None and arr.dtype == np.bool_ else 1

    n_real = sum(width(p, a) for p, a in zip(parts, arrays))
    out: list[Any] = []
    dim = 0
    for p, arr in zip(parts, arrays):
        if p is Ellipsis:
            dim += len(shape) - n_real
        elif arr is not None and arr.dtype.kind in "iu" and dim < len(shape) and shape[dim]:
            p = np.mod(arr, shape[dim])
        out.append(p)
        dim += width(p, arr)
    return tuple(out) if isinstance(key, tuple) else out[0]


def _is_basic(key: Any) -> bool:
    parts = key if isinstance(key, tuple) else (key,)
    return all(p is None or p is Ellipsis or isinstance(p, slice)
               or (isinstance(p, (numbers.Integral, np.integer))
                   and not isinstance(p, (bool, np.bool_)))
               for p in parts)


def _int_arrays(key: Any) -> tuple[int, int]:
    """(integer array indices, boolean array indices) in an advanced index."""
    parts = key if isinstance(key, tuple) else (key,)
    ints = bools = 0
    for p in parts:
        if isinstance(p, (np.ndarray, list)):
            if np.asarray(p).dtype == np.bool_:
                bools += 1
            else:
                ints += 1
        elif isinstance(p, (bool, np.bool_)):
            bools += 1
    return ints, bools


_SCATTER_ADD_DTYPES = {np.dtype(t) for t in ("int32", "float16", "float32", "float64", "uint32",
                                             "uint64")}


def scatter(a: ndarray, key: Any, value: Any, op: str) -> None:
    """``a[key] = value`` (op ``update``) or ``a[key] += value`` accumulating repeated indices
    (op ``add``, ``cupyx.scatter_add``), with CuPy's rules for the value's type."""
    srcs: list[Any] = [a]
    k0 = index_key(key, srcs)
    basic = _is_basic(k0)
    if isinstance(value, ndarray):
        srcs.append(value)
        v: Any = value._a
    elif basic and op == "update":
        # NOTE: CuPy fills basic-index targets with ``ndarray.fill``: a scalar or a 0-d array.
        if isinstance(value, np.ndarray):
            if value.ndim:
                raise ValueError("non-scalar numpy.ndarray cannot be used for fill")
            v = value.item()
        elif isinstance(value, _SCALARS):
            v = value
        else:
            raise unsupported(value)
    elif basic:
        v = kernel_arg(value, srcs)
    else:
        v = np.asarray(value, dtype=a.dtype)  # CuPy copies host values for advanced indices
    if op == "add" and not basic:
        ints, bools = _int_arrays(k0)
        if not (ints == 0 and bools == 1) and a.dtype not in _SCATTER_ADD_DTYPES:
            raise TypeError("scatter_add only supports int32, float16, float32, float64, "
                            "uint32, uint64, as data type")
    arr = a._a

    def compute() -> None:
        # NOTE: the key is worked out from the index buffers each time: a replay reads them anew
        k = k0 if basic else wrap_out_of_range(arr.shape, k0)
        if op == "update":
            arr[k] = v
        else:
            np.add.at(arr, k, v)

    run("scatter" if op == "update" else "scatter_add", compute, srcs)


# ---- the array ----------------------------------------------------------------------------

def _binop(name: str, reflected: bool = False) -> Any:
    def op(self: ndarray, other: Any) -> Any:
        if isinstance(other, (np.ndarray, list, tuple)):
            raise unsupported(other)
        if not isinstance(other, (ndarray, *_SCALARS)) and \
                not hasattr(other, "__cuda_array_interface__"):
            return NotImplemented  # e.g. a Tensor's reflected operator
        uf = ufunc(name)
        return uf(other, self) if reflected else uf(self, other)

    return op


def _inplace(name: str) -> Any:
    def op(self: ndarray, other: Any) -> Any:
        if isinstance(other, (np.ndarray, list, tuple)):
            raise unsupported(other)
        if not isinstance(other, (ndarray, *_SCALARS)):
            return NotImplemented
        ufunc(name)(self, other, out=self)
        return self

    return op


def _unop(name: str) -> Any:
    def op(self: ndarray) -> Any:
        return ufunc(name)(self)

    return op


def _method(name: str) -> Any:
    def m(self: ndarray, *args: Any, **kwargs: Any) -> Any:
        srcs: list[Any] = [self]
        a = unwrap(args, srcs)
        kw = {k: unwrap(v, srcs) for k, v in kwargs.items()}
        arr = self._a
        return run(name, lambda: getattr(arr, name)(*a, **kw), srcs)

    m.__name__ = name
    return m


class ndarray:  # noqa: N801  (CuPy's name)
    """The fake ``cupy.ndarray`` (see the module docstring)."""

    _a: np.ndarray
    _owner: ndarray | None
    _mem: Memory | None
    __array_priority__ = 100
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, shape: Any, dtype: Any = float, memptr: Any = None, strides: Any = None,
                 order: str = "C") -> None:
        if memptr is not None or strides is not None:
            raise NotImplementedError("the fake cupy.ndarray() takes shape, dtype and order only")
        self._a = np.empty(shape, dtype=dtype, order=order)  # type: ignore[call-overload]
        self._owner = None
        self._mem = allocate(self._a.nbytes) if self._a.nbytes else None

    # ---- attributes ---------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self._a.shape

    @shape.setter
    def shape(self, value: Any) -> None:
        v = self._a.view()
        v.shape = value  # AttributeError when a copy would be needed, as in CuPy
        self._a = v

    @property
    def dtype(self) -> np.dtype:
        return self._a.dtype

    @property
    def ndim(self) -> int:
        return self._a.ndim

    @property
    def size(self) -> int:
        return self._a.size

    @property
    def itemsize(self) -> int:
        return self._a.itemsize

    @property
    def nbytes(self) -> int:
        return self._a.nbytes

    @property
    def strides(self) -> tuple[int, ...]:
        return self._a.strides

    @property
    def base(self) -> ndarray | None:
        return self._owner

    @property
    def flags(self) -> Flags:
        f = self._a.flags
        return Flags(bool(f.c_contiguous), bool(f.f_contiguous), self._owner is None)

    @property
    def data(self) -> MemoryPointer:
        owner = self._owner if self._owner is not None else self
        mem = owner._mem if owner._mem is not None else Memory(0)
        return MemoryPointer(mem, ptr=int(self._a.__array_interface__["data"][0]))

    @property
    def device(self) -> Any:
        from ._cuda import Device

        return Device(0)

    @property
    def T(self) -> ndarray:  # noqa: N802
        return wrap(self._a.T, (self,))

    @property
    def mT(self) -> ndarray:  # noqa: N802
        return wrap(np.swapaxes(self._a, -1, -2), (self,))

    @property
    def real(self) -> ndarray:
        return wrap(self._a.real, (self,))

    @property
    def imag(self) -> ndarray:
        return wrap(self._a.imag, (self,))

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        a = self._a
        return {"shape": a.shape, "typestr": a.dtype.str, "descr": a.dtype.descr,
                "data": (self.data.ptr if a.size else 0, False), "version": 3,
                "strides": None if a.flags.c_contiguous else a.strides}

    def __dlpack_device__(self) -> tuple[int, int]:
        return (2, 0)  # kDLCUDA, device 0

    def __dlpack__(self, *, stream: Any = None, max_version: Any = None, dl_device: Any = None,
                   copy: Any = None) -> Any:
        # NOTE: the capsule describes host memory; only ``cupy.from_dlpack`` of this fake reads
        # it back (through the object, not the capsule's device field).
        return self._a.__dlpack__(max_version=max_version, copy=copy)

    # ---- host transfers -----------------------------------------------------------------
    def get(self, stream: Any = None, order: str = "C", out: Any = None,
            blocking: bool = True) -> np.ndarray:
        """A host copy (never a view of the device buffer)."""
        host_read("ndarray.get (a device-to-host copy)")
        if out is not None:
            np.copyto(out, self._a)
            return out  # type: ignore[no-any-return]
        return np.array(self._a, copy=True, order=order)  # type: ignore[arg-type]

    def set(self, arr: np.ndarray, stream: Any = None) -> None:
        if not isinstance(arr, np.ndarray):
            raise TypeError(f"Only numpy.ndarray can be set to cupy.ndarray (got {type(arr)})")
        host_read("ndarray.set (a host-to-device copy of pageable memory)")
        if arr.shape != self.shape:
            raise ValueError("Shape mismatch")
        if arr.dtype != self.dtype:
            raise TypeError(f"{arr.dtype} array cannot be set to {self.dtype} array")
        self._a[...] = arr

    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(IMPLICIT_MSG)

    # ---- NumPy protocols: dispatch to the fake cupy, with its strictness --------------------
    def __array_ufunc__(self, uf: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        u = ufunc(uf.__name__)
        if uf.__name__ in _COMPARISONS:
            # NOTE: ``np.float32(1) < x`` reaches here with the scalar as a 0-d NumPy array;
            # CuPy takes it back as a scalar (its workaround for numpy/numpy#12142), so do we.
            inputs = tuple(x.item() if isinstance(x, np.ndarray) and x.ndim == 0 else x
                           for x in inputs)
        return getattr(u, method)(*inputs, **kwargs) if method != "__call__" else \
            u(*inputs, **kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        return call(func, args, kwargs)

    # ---- Python protocols ---------------------------------------------------------------
    def __repr__(self) -> str:
        host_read("repr (a device-to-host copy)")
        return repr(self._a)

    def __str__(self) -> str:
        host_read("str (a device-to-host copy)")
        return str(self._a)

    def __format__(self, spec: str) -> str:
        host_read("format (a device-to-host copy)")
        return format(self._a, spec) if self._a.ndim else format(self._a.item(), spec)

    def __len__(self) -> int:
        if not self._a.ndim:
            raise TypeError("len() of unsized object")
        return len(self._a)

    def __iter__(self) -> Any:
        if not self._a.ndim:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(len(self._a)))

    def __bool__(self) -> bool:
        host_read("bool (a device-to-host copy)")
        return bool(self._a)

    def __float__(self) -> float:
        host_read("float (a device-to-host copy)")
        return float(self._a)

    def __int__(self) -> int:
        host_read("int (a device-to-host copy)")
        return int(self._a)

    def __complex__(self) -> complex:
        host_read("complex (a device-to-host copy)")
        return complex(self._a)

    def __index__(self) -> int:
        host_read("index (a device-to-host copy)")
        return self._a.__index__()

    def __copy__(self) -> ndarray:
        return self.copy()

    def __deepcopy__(self, memo: Any) -> ndarray:
        return self.copy()

    def __reduce__(self) -> tuple[Any, ...]:
        from ._cupy import asarray

        return (asarray, (self.get(),))

    def __getitem__(self, key: Any) -> Any:
        srcs: list[Any] = [self]
        k0 = index_key(key, srcs)
        arr = self._a
        if _is_basic(k0):  # a view: no device work
            r = arr[k0]
            if isinstance(r, np.generic):
                # NOTE: CuPy's x[i] is a 0-d view of x (NumPy's is a scalar copy).
                parts = k0 if isinstance(k0, tuple) else (k0,)
                if not any(p is Ellipsis for p in parts):
                    r = arr[parts + (Ellipsis,)]
            return wrap(r, tuple(srcs))

        def compute() -> Any:
            return np.asarray(arr[wrap_out_of_range(arr.shape, k0)])

        return run("boolean mask indexing" if _int_arrays(k0)[1] else "take", compute, srcs)

    def __setitem__(self, key: Any, value: Any) -> None:
        scatter(self, key, value, "update")

    def scatter_add(self, key: Any, value: Any) -> None:
        scatter(self, key, value, "add")

    __add__, __radd__, __iadd__ = _binop("add"), _binop("add", True), _inplace("add")
    __sub__, __rsub__, __isub__ = (_binop("subtract"), _binop("subtract", True),
                                   _inplace("subtract"))
    __mul__, __rmul__, __imul__ = (_binop("multiply"), _binop("multiply", True),
                                   _inplace("multiply"))
    __truediv__, __rtruediv__, __itruediv__ = (_binop("true_divide"),
                                               _binop("true_divide", True),
                                               _inplace("true_divide"))
    __floordiv__, __rfloordiv__, __ifloordiv__ = (_binop("floor_divide"),
                                                  _binop("floor_divide", True),
                                                  _inplace("floor_divide"))
    __mod__, __rmod__, __imod__ = (_binop("remainder"), _binop("remainder", True),
                                   _inplace("remainder"))
    __pow__, __rpow__, __ipow__ = _binop("power"), _binop("power", True), _inplace("power")
    __matmul__, __rmatmul__ = _binop("matmul"), _binop("matmul", True)
    __and__, __rand__, __iand__ = (_binop("bitwise_and"), _binop("bitwise_and", True),
                                   _inplace("bitwise_and"))
    __or__, __ror__, __ior__ = (_binop("bitwise_or"), _binop("bitwise_or", True),
                                _inplace("bitwise_or"))
    __xor__, __rxor__, __ixor__ = (_binop("bitwise_xor"), _binop("bitwise_xor", True),
                                   _inplace("bitwise_xor"))
    __lshift__, __rshift__ = _binop("left_shift"), _binop("right_shift")
    __eq__ = _binop("equal")  # type: ignore[assignment]
    __ne__ = _binop("not_equal")  # type: ignore[assignment]
    __lt__, __le__ = _binop("less"), _binop("less_equal")
    __gt__, __ge__ = _binop("greater"), _binop("greater_equal")
    __neg__, __pos__, __abs__ = _unop("negative"), _unop("positive"), _unop("absolute")
    __invert__ = _unop("invert")

    def __divmod__(self, other: Any) -> Any:
        return ufunc("divmod")(self, other)

    def item(self, *args: Any) -> Any:
        host_read("ndarray.item (a device-to-host copy)")
        return self._a.item(*args)

    def tolist(self) -> Any:
        host_read("ndarray.tolist (a device-to-host copy)")
        return self._a.tolist()


# Methods CuPy's ndarray has, served by NumPy's on the wrapped array.
for _name in ("all", "any", "argmax", "argmin", "argpartition", "argsort", "astype", "clip",
              "compress", "conj", "conjugate", "copy", "cumprod", "cumsum", "diagonal", "dot",
              "fill", "flatten", "max", "mean", "min", "nonzero", "partition", "prod", "ptp", "put",
              "ravel", "repeat", "reshape", "round", "sort", "squeeze", "std", "sum", "swapaxes",
              "take", "tobytes", "trace", "transpose", "var", "view"):
    setattr(ndarray, _name, _method(_name))
del _name

ndarray.__module__ = "cupy"
