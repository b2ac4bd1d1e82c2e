"""``out=`` on the last ``torch.*`` functions that lacked it (the comparison aliases, ``gcd``,
``lcm``, the shifts, ``frexp``, ``complex``, ``polar``, ``conj_physical``, and the factories
``zeros``/``ones``/``empty``) against PyTorch: values written into the given tensor, its identity
kept, dtype casts and refusals, autograd refused."""

from __future__ import annotations

from typing import Any

import torch

import autograd_gpu as ag
from tests.misuse._catalogue import Case, catalogue_test


def _f(T: Any, dev: str) -> Any:
    return T.tensor([[1.5, -2.0, 0.25], [3.0, 0.5, -1.0]], device=dev)


def _i(T: Any, dev: str) -> Any:
    return T.tensor([[4, 6, 9], [12, 5, 2]], device=dev)


_ARGS: dict[str, Any] = {
    **{n: (lambda T, d: (_f(T, d), 0.5)) for n in ("greater", "greater_equal", "less",
                                                   "less_equal", "not_equal")},
    "absolute": lambda T, d: (_f(T, d),),
    "conj_physical": lambda T, d: (_f(T, d),),
    **{n: (lambda T, d: (_i(T, d), _i(T, d).flip(1))) for n in ("gcd", "lcm")},
    **{n: (lambda T, d: (_i(T, d), T.tensor(1, device=d)))
       for n in ("bitwise_left_shift", "bitwise_right_shift")},
    **{n: (lambda T, d: (_f(T, d).abs(), _f(T, d))) for n in ("complex", "polar")},
}


def _case(name: str, dtype: str | None) -> Case:
    def run(T: Any, dev: str) -> Any:
        args = _ARGS[name](T, dev)
        want = getattr(T, name)(*args)
        out = T.empty(0, dtype=getattr(T, dtype) if dtype else want.dtype, device=dev)
        r = getattr(T, name)(*args, out=out)
        assert r is out
        return r, repr(r.dtype)
    return run


def _frexp(T: Any, dev: str, m_dtype: str, e_dtype: str) -> Any:
    x = T.tensor([1.5, -2.0, 0.0, 96.0], device=dev)
    m = T.empty(0, dtype=getattr(T, m_dtype), device=dev)
    e = T.empty(3, dtype=getattr(T, e_dtype), device=dev)
    r = T.frexp(x, out=(m, e))
    assert r[0] is m and r[1] is e
    return tuple(r), r.mantissa, r.exponent


def _factory(T: Any, dev: str, fn: str, *size: Any, out_dtype: str = "float32",
             **kw: Any) -> Any:
    out = T.empty(5, dtype=getattr(T, out_dtype), device=dev)
    r = getattr(T, fn)(*size, out=out, **kw)
    assert r is out
    return (r if fn != "empty" else None), tuple(r.shape), repr(r.dtype), r.requires_grad


CASES: dict[str, Case] = {
    **{f"{n}_{d}": _case(n, d) for n in sorted(_ARGS) for d in (None, "float64", "int64")},
    "frexp": lambda T, d: _frexp(T, d, "float32", "int32"),
    "frexp_bad_mantissa": lambda T, d: _frexp(T, d, "float64", "int32"),
    "frexp_bad_exponent": lambda T, d: _frexp(T, d, "float32", "int64"),
    "frexp_not_a_tuple": lambda T, d: T.frexp(T.ones(2, device=d), out=T.empty(0, device=d)),
    "greater_grad_allowed": lambda T, d: T.greater(T.ones(2, device=d, requires_grad=True), 0,
                                               out=T.empty(0, dtype=T.bool, device=d)),
    "polar_requires_grad_out": lambda T, d: T.polar(
        T.ones(2, device=d), T.ones(2, device=d),
        out=T.empty(0, dtype=T.complex64, device=d, requires_grad=True)),
    "zeros": lambda T, d: _factory(T, d, "zeros", 2, 3),
    "zeros_tuple_int_out": lambda T, d: _factory(T, d, "zeros", (2,), out_dtype="int64"),
    "ones": lambda T, d: _factory(T, d, "ones", 3, out_dtype="int32"),
    "empty": lambda T, d: _factory(T, d, "empty", 1, 2),
    "zeros_dtype_mismatch": lambda T, d: _factory(T, d, "zeros", 2, dtype=T.float64),
    "zeros_dtype_match": lambda T, d: _factory(T, d, "zeros", 2, dtype=T.float32),
    "zeros_requires_grad": lambda T, d: _factory(T, d, "zeros", 2, requires_grad=True),
    "zeros_out_requires_grad": lambda T, d: T.zeros(
        2, out=T.empty(0, device=d, requires_grad=True)),
    "zeros_out_not_tensor": lambda T, d: T.zeros(2, out=[1.0]),
    "ones_device_mismatch": lambda T, d: _factory(T, "cpu", "ones", 2, device="meta"),
}

test_out_longtail = catalogue_test(CASES)


def test_no_counted_function_lacks_out() -> None:
    """Every function we have that takes ``out=`` in PyTorch takes it here (sampled on simple
    float and integer arguments torch accepts with ``out=``)."""
    import re
    import sys
    import warnings
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
    import api_coverage

    def samples(m: Any) -> list[tuple[Any, ...]]:
        x = m.arange(1.0, 10.0, dtype=m.float64).reshape(3, 3) / 10
        i = m.tensor([1, 2, 3])
        return [(x,), (x, x), (x, 1), (x, 0), (x, x, x), (i,), (i, i), ([x, x],), (3,),
                (x, [1])]

    lacking = []
    warnings.simplefilter("ignore")  # NOTE: inside pytest's catch_warnings for this test
    for name in api_coverage.counted(torch)["torch"]:
        theirs, ours = getattr(torch, name), getattr(ag, name, None)
        if ours is None or not re.search(r"\bout\b", theirs.__doc__ or ""):
            continue
        for t_args, o_args in zip(samples(torch), samples(ag)):
            try:
                want = theirs(*t_args)
                outs = tuple(torch.empty(0, dtype=w.dtype) for w in want) \
                    if isinstance(want, tuple) else torch.empty(0, dtype=want.dtype)
                theirs(*t_args, out=outs)
            except Exception:  # noqa: BLE001  (not a sample torch takes with out=)
                continue
            dts = [w.dtype for w in want] if isinstance(want, tuple) else [want.dtype]
            mine = tuple(ag.empty(0, dtype=getattr(ag, str(d).split(".")[-1])) for d in dts)
            try:
                ours(*o_args, out=mine if isinstance(want, tuple) else mine[0])
            except TypeError as e:
                if "out" in str(e):
                    lacking.append(name)
            break
    assert not lacking, lacking


def test_out_is_refused_where_a_gradient_could_flow() -> None:
    for T in (torch, ag):
        x = T.ones(2, requires_grad=True)
        assert T.argmax(x, out=T.empty(0, dtype=T.long)).tolist() == 0
        try:
            T.exp(x, out=T.empty(0))
        except RuntimeError as e:
            assert "functions with out=... arguments don't support automatic" in str(e)
        else:
            raise AssertionError(f"{T.__name__}: exp(out=) took an input requiring grad")
