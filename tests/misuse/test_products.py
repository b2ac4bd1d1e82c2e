"""Misuse catalogue: the products family (``einsum``, ``outer``/``ger``, ``kron``, ``cross``,
``trace``, ``tensordot``, ``baddbmm``, ``addbmm``, ``addmv``, ``addr``, ``vdot``, ``inner``,
``chain_matmul``): each refusal with PyTorch's exception type and first sentence, in PyTorch's
order where several checks fail, and the legal corners next to them."""

from __future__ import annotations

import warnings
from typing import Any

from tests.misuse._catalogue import Case, catalogue_test


def _x(T: Any, dev: str, *shape: int, dtype: str = "float32") -> Any:
    n = 1
    for s in shape:
        n *= s
    return (T.arange(n, device=dev).reshape(shape) % 5 - 2).to(getattr(T, dtype))


def _chain(T: Any, *ms: Any, **kwargs: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return T.chain_matmul(*ms, **kwargs)


def _quiet(fn: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecation warnings (once per process)
        return fn()


def _cross(T: Any, a: Any, b: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return T.cross(a, b)


A = (2, 3)
B = (3, 4)


CASES: dict[str, Case] = {
    # einsum: arguments and equation
    "einsum_no_operand": lambda T, dev: T.einsum("ij"),
    "einsum_only_tensor": lambda T, dev: T.einsum(_x(T, dev, *A)),
    "einsum_arrow_only": lambda T, dev: T.einsum("->"),
    "einsum_more_operands": lambda T, dev: T.einsum("ij", _x(T, dev, *A), _x(T, dev, *B)),
    "einsum_fewer_operands": lambda T, dev: T.einsum("ij,jk", _x(T, dev, *A)),
    "einsum_too_many_subscripts": lambda T, dev: T.einsum("ijk", _x(T, dev, *A)),
    "einsum_too_few_subscripts": lambda T, dev: T.einsum("i", _x(T, dev, *A)),
    "einsum_ellipsis_too_many": lambda T, dev: T.einsum("...ijk", _x(T, dev, *A)),
    "einsum_bad_char": lambda T, dev: T.einsum("i1", _x(T, dev, *A)),
    "einsum_bad_char_with_space": lambda T, dev: T.einsum(" i 1", _x(T, dev, *A)),
    "einsum_bad_arrow": lambda T, dev: T.einsum("ij-k", _x(T, dev, *A)),
    "einsum_bad_output_char": lambda T, dev: T.einsum("ij->i2", _x(T, dev, *A)),
    "einsum_output_twice": lambda T, dev: T.einsum("ij->ii", _x(T, dev, *A)),
    "einsum_output_unknown": lambda T, dev: T.einsum("ij->k", _x(T, dev, *A)),
    "einsum_sizes": lambda T, dev: T.einsum("ij,ij->i", _x(T, dev, *A), _x(T, dev, *B)),
    "einsum_repeated_sizes": lambda T, dev: T.einsum("ii", _x(T, dev, *A)),
    "einsum_dots": lambda T, dev: T.einsum("ij..,ij", _x(T, dev, *A), _x(T, dev, *A)),
    "einsum_dot_in_middle": lambda T, dev: T.einsum("i.j", _x(T, dev, *A)),
    "einsum_two_ellipses": lambda T, dev: T.einsum("...i...", _x(T, dev, *A)),
    "einsum_output_two_ellipses": lambda T, dev: T.einsum("...i->......", _x(T, dev, *A)),
    "einsum_output_dots": lambda T, dev: T.einsum("...i->..", _x(T, dev, *A)),
    "einsum_ellipsis_broadcast": lambda T, dev: T.einsum(
        "...i,...i->...i", _x(T, dev, 2, 3), _x(T, dev, 4, 3)),
    "einsum_dtypes": lambda T, dev: T.einsum("ij,jk", _x(T, dev, *A),
                                             _x(T, dev, *B, dtype="float64")),
    "einsum_int_float": lambda T, dev: T.einsum("ij,jk", _x(T, dev, *A, dtype="int64"),
                                                _x(T, dev, *B)),
    "einsum_bool_contract": lambda T, dev: T.einsum("ij,jk", _x(T, dev, *A, dtype="bool"),
                                                    _x(T, dev, *B, dtype="bool")),
    "einsum_not_tensor": lambda T, dev: T.einsum("ij", 3),
    "einsum_sublist_range": lambda T, dev: T.einsum(_x(T, dev, *A), [0, 60]),
    "einsum_sublist_negative": lambda T, dev: T.einsum(_x(T, dev, *A), [0, -1]),
    "einsum_sublist_ellipsis_broadcast": lambda T, dev: T.einsum(
        _x(T, dev, *A), [..., 1], _x(T, dev, *B), [1, ...]),
    "einsum_ellipsis_no_input": lambda T, dev: T.einsum("i->...i", _x(T, dev, 3)),
    "einsum_ellipsis_summed": lambda T, dev: T.einsum("...i->i", _x(T, dev, *A)),
    "einsum_double_backward": lambda T, dev: T.autograd.grad(
        T.autograd.grad(T.einsum("ij,jk->", x := _x(T, dev, *A, dtype="float64")
                                 .requires_grad_(), x.t() * x.t()), x, create_graph=True)[0]
        .pow(2).sum(), x),
    # outer / ger / kron
    "outer_2d": lambda T, dev: T.outer(_x(T, dev, *A), _x(T, dev, 3)),
    "outer_0d": lambda T, dev: T.outer(T.tensor(1.0, device=dev), _x(T, dev, 3)),
    "outer_2d_vec2": lambda T, dev: T.outer(_x(T, dev, 3), _x(T, dev, *A)),
    "ger_2d": lambda T, dev: _quiet(lambda: T.ger(_x(T, dev, *A), _x(T, dev, 3))),
    "kron_transposed": lambda T, dev: T.kron(_x(T, dev, *A).t(), _x(T, dev, 2, 2)),
    # cross
    "cross_no_size_3": lambda T, dev: _cross(T, T.tensor(1.0, device=dev),
                                             T.tensor(1.0, device=dev)),
    "cross_dim_length": lambda T, dev: T.cross(_x(T, dev, *A), _x(T, dev, *A), dim=0),
    "cross_shapes": lambda T, dev: T.cross(_x(T, dev, 2, 3), _x(T, dev, 4, 3), dim=1),
    "cross_default_dim_length": lambda T, dev: _cross(T, _x(T, dev, 3, 2), _x(T, dev, 1, 2)),
    "cross_dtypes": lambda T, dev: T.cross(_x(T, dev, 2, 3), _x(T, dev, 2, 3, dtype="float64"),
                                           dim=1),
    "cross_ndim": lambda T, dev: T.cross(_x(T, dev, 2, 3), _x(T, dev, 3), dim=1),
    "cross_bool": lambda T, dev: T.cross(_x(T, dev, 2, 3, dtype="bool"),
                                         _x(T, dev, 2, 3, dtype="bool"), dim=1),
    "cross_bad_dim": lambda T, dev: T.cross(_x(T, dev, 2, 3), _x(T, dev, 2, 3), dim=2),
    # trace
    "trace_3d": lambda T, dev: T.trace(_x(T, dev, 2, 2, 2)),
    "trace_1d": lambda T, dev: T.trace(_x(T, dev, 3)),
    "trace_bool": lambda T, dev: T.trace(_x(T, dev, 2, 2, dtype="bool")),
    # tensordot
    "tensordot_dims_too_large": lambda T, dev: T.tensordot(_x(T, dev, *A), _x(T, dev, *B), 3),
    "tensordot_dims_negative": lambda T, dev: T.tensordot(_x(T, dev, *A), _x(T, dev, *B), -1),
    "tensordot_sizes": lambda T, dev: T.tensordot(_x(T, dev, *A), _x(T, dev, *A), 1),
    "tensordot_list_lengths": lambda T, dev: T.tensordot(_x(T, dev, *A), _x(T, dev, *B),
                                                         ([1, 0], [0])),
    "tensordot_dtypes": lambda T, dev: T.tensordot(_x(T, dev, *A),
                                                   _x(T, dev, *B, dtype="float64"), 1),
    "tensordot_int_pair": lambda T, dev: T.tensordot(_x(T, dev, *A), _x(T, dev, *B), [1, 0]),
    "tensordot_three_lists": lambda T, dev: T.tensordot(_x(T, dev, *A), _x(T, dev, *B),
                                                        ([1], [0], [0])),
    "tensordot_repeated": lambda T, dev: T.tensordot(_x(T, dev, 2, 2), _x(T, dev, 2, 2),
                                                     ([0, 0], [0, 1])),
    "tensordot_bad_dim": lambda T, dev: T.tensordot(_x(T, dev, *A), _x(T, dev, *B), ([2], [0])),
    "tensordot_tensor_2d": lambda T, dev: T.tensordot(
        _x(T, dev, *A), _x(T, dev, *B), T.tensor([[1, 0], [0, 1]], device=dev)),
    "tensordot_tensor_negative": lambda T, dev: T.tensordot(
        _x(T, dev, *A), _x(T, dev, *B), T.tensor(-1)),
    "tensordot_bool": lambda T, dev: T.tensordot(_x(T, dev, *A, dtype="bool"),
                                                 _x(T, dev, *B, dtype="bool"), 1),
    # baddbmm
    "baddbmm_batch1_2d": lambda T, dev: T.baddbmm(_x(T, dev, 2, 3, 5), _x(T, dev, 3, 4),
                                                  _x(T, dev, 2, 4, 5)),
    "baddbmm_batch2_2d": lambda T, dev: T.baddbmm(_x(T, dev, 2, 3, 5), _x(T, dev, 2, 3, 4),
                                                  _x(T, dev, 4, 5)),
    "baddbmm_batch1_4d": lambda T, dev: T.baddbmm(_x(T, dev, 5), _x(T, dev, 1, 2, 3, 4),
                                                  _x(T, dev, 2, 4, 5)),
    # NOTE: expand's message names the tensor type, torch.cuda.FloatTensor on CUDA (as ours
    # does), which the catalogue cannot compare with the CPU oracle's: these run on the CPU
    "baddbmm_input_4d": lambda T, dev: T.baddbmm(_x(T, "cpu", 1, 2, 3, 5), _x(T, "cpu", 2, 3, 4),
                                                 _x(T, "cpu", 2, 4, 5)),
    "baddbmm_input_shape": lambda T, dev: T.baddbmm(_x(T, dev, 2, 3, 5), _x(T, dev, 2, 3, 4),
                                                    _x(T, dev, 2, 4, 6)),
    "baddbmm_dtype_input": lambda T, dev: T.baddbmm(_x(T, dev, 2, 3, 5, dtype="float64"),
                                                    _x(T, dev, 2, 3, 4), _x(T, dev, 2, 4, 5)),
    "baddbmm_dtype_batch1": lambda T, dev: T.baddbmm(
        _x(T, dev, 2, 3, 5), _x(T, dev, 2, 3, 4, dtype="int64"), _x(T, dev, 2, 4, 5)),
    "baddbmm_dtype_batch2": lambda T, dev: T.baddbmm(
        _x(T, dev, 2, 3, 5), _x(T, dev, 2, 3, 4), _x(T, dev, 2, 4, 5, dtype="float64")),
    "baddbmm_bool": lambda T, dev: T.baddbmm(*(_x(T, dev, *s, dtype="bool")
                                               for s in ((2, 3, 5), (2, 3, 4), (2, 4, 5)))),
    "baddbmm_batches": lambda T, dev: T.baddbmm(_x(T, dev, 2, 3, 5), _x(T, dev, 2, 3, 4),
                                                _x(T, dev, 3, 4, 5)),
    "baddbmm_inner": lambda T, dev: T.baddbmm(_x(T, dev, 2, 3, 5), _x(T, dev, 2, 3, 4),
                                              _x(T, dev, 2, 3, 5)),
    # addbmm
    "addbmm_batch1_2d": lambda T, dev: T.addbmm(_x(T, dev, 3, 5), _x(T, dev, 3, 4),
                                                _x(T, dev, 2, 4, 5)),
    "addbmm_batch2_2d": lambda T, dev: T.addbmm(_x(T, dev, 3, 5), _x(T, dev, 2, 3, 4),
                                                _x(T, dev, 4, 5)),
    "addbmm_input_3d": lambda T, dev: T.addbmm(_x(T, "cpu", 1, 3, 5), _x(T, "cpu", 2, 3, 4),
                                               _x(T, "cpu", 2, 4, 5)),
    "addbmm_dtype_input": lambda T, dev: T.addbmm(_x(T, dev, 3, 5, dtype="float64"),
                                                  _x(T, dev, 2, 3, 4), _x(T, dev, 2, 4, 5)),
    "addbmm_dtype_batch2": lambda T, dev: T.addbmm(_x(T, dev, 3, 5), _x(T, dev, 2, 3, 4),
                                                   _x(T, dev, 2, 4, 5, dtype="float64")),
    "addbmm_bool": lambda T, dev: T.addbmm(*(_x(T, dev, *s, dtype="bool")
                                             for s in ((3, 5), (2, 3, 4), (2, 4, 5)))),
    "addbmm_batches": lambda T, dev: T.addbmm(_x(T, dev, 3, 5), _x(T, dev, 2, 3, 4),
                                              _x(T, dev, 3, 4, 5)),
    "addbmm_inner": lambda T, dev: T.addbmm(_x(T, dev, 3, 5), _x(T, dev, 2, 3, 4),
                                            _x(T, dev, 2, 3, 5)),
    "addbmm_int_alpha": lambda T, dev: T.addbmm(*(_x(T, dev, *s, dtype="int64")
                                                  for s in ((3, 5), (2, 3, 4), (2, 4, 5))),
                                                alpha=0.5),
    # addmv
    "addmv_sizes": lambda T, dev: T.addmv(_x(T, dev, 2), _x(T, dev, *A), _x(T, dev, 4)),
    "addmv_input_size": lambda T, dev: T.addmv(_x(T, dev, 3), _x(T, dev, *A), _x(T, dev, 3)),
    "addmv_1d_mat": lambda T, dev: T.addmv(_x(T, dev, 2), _x(T, dev, 3), _x(T, dev, 3)),
    "addmv_2d_vec": lambda T, dev: T.addmv(_x(T, dev, 2), _x(T, dev, *A), _x(T, dev, 3, 1)),
    "addmv_2d_input": lambda T, dev: T.addmv(_x(T, dev, 1, 2), _x(T, dev, *A), _x(T, dev, 3)),
    "addmv_dtype_input": lambda T, dev: T.addmv(_x(T, dev, 2, dtype="float64"), _x(T, dev, *A),
                                                _x(T, dev, 3)),
    "addmv_dtype_vec": lambda T, dev: T.addmv(_x(T, dev, 2), _x(T, dev, *A),
                                              _x(T, dev, 3, dtype="float64")),
    "addmv_bool": lambda T, dev: T.addmv(_x(T, dev, 2, dtype="bool"), _x(T, dev, *A, dtype="bool"),
                                         _x(T, dev, 3, dtype="bool")),
    "addmv_int_alpha": lambda T, dev: T.addmv(_x(T, dev, 2, dtype="int64"),
                                              _x(T, dev, *A, dtype="int64"),
                                              _x(T, dev, 3, dtype="int64"), alpha=0.5),
    # addr
    "addr_2d_vec1": lambda T, dev: T.addr(_x(T, dev, *A), _x(T, dev, *A), _x(T, dev, 3)),
    "addr_2d_vec2": lambda T, dev: T.addr(_x(T, dev, *A), _x(T, dev, 2), _x(T, dev, 3, 1)),
    "addr_0d_vec1": lambda T, dev: T.addr(_x(T, dev, *A), T.tensor(1.0, device=dev),
                                          _x(T, dev, 3)),
    "addr_input_shape": lambda T, dev: T.addr(_x(T, dev, 3, 3), _x(T, dev, 2), _x(T, dev, 3)),
    "addr_input_3d": lambda T, dev: T.addr(_x(T, "cpu", 1, 2, 3), _x(T, "cpu", 2), _x(T, "cpu", 3)),
    "addr_input_1d": lambda T, dev: T.addr(_x(T, dev, 3), _x(T, dev, 2), _x(T, dev, 3)),
    "addr_int_beta_float": lambda T, dev: T.addr(*(_x(T, dev, *s, dtype="int64")
                                                   for s in (A, (2,), (3,))), beta=0.5),
    "addr_int_alpha_float": lambda T, dev: T.addr(*(_x(T, dev, *s, dtype="int64")
                                                    for s in (A, (2,), (3,))), alpha=0.5),
    "addr_bool_beta_float": lambda T, dev: T.addr(*(_x(T, dev, *s, dtype="bool")
                                                    for s in (A, (2,), (3,))), beta=0.5),
    "addr_float_bool_alpha": lambda T, dev: T.addr(_x(T, dev, *A), _x(T, dev, 2), _x(T, dev, 3),
                                                   alpha=True),
    "addr_int_float_vecs_alpha": lambda T, dev: T.addr(_x(T, dev, *A, dtype="int64"),
                                                       _x(T, dev, 2), _x(T, dev, 3), alpha=0.5),
    "addr_bool_int": lambda T, dev: T.addr(_x(T, dev, *A, dtype="bool"),
                                           _x(T, dev, 2, dtype="int64"), _x(T, dev, 3, dtype="bool")),
    # vdot / inner
    "vdot_2d": lambda T, dev: T.vdot(_x(T, dev, *A), _x(T, dev, *A)),
    "vdot_sizes": lambda T, dev: T.vdot(_x(T, dev, 3), _x(T, dev, 4)),
    "vdot_dtypes": lambda T, dev: T.vdot(_x(T, dev, 3), _x(T, dev, 3, dtype="float64")),
    "vdot_bool": lambda T, dev: T.vdot(_x(T, dev, 3, dtype="bool"), _x(T, dev, 3, dtype="bool")),
    "inner_sizes": lambda T, dev: T.inner(_x(T, dev, *A), _x(T, dev, *B)),
    "inner_dtypes": lambda T, dev: T.inner(_x(T, dev, *A), _x(T, dev, *A, dtype="float64")),
    "inner_0d_promotes": lambda T, dev: T.inner(T.tensor(2.0, device=dev),
                                                _x(T, dev, *A, dtype="int64")),
    # chain_matmul
    "chain_matmul_none": lambda T, dev: _chain(T),
    "chain_matmul_3d": lambda T, dev: _chain(T, _x(T, dev, 2, 2, 2), _x(T, dev, 2, 2)),
    "chain_matmul_1d": lambda T, dev: _chain(T, _x(T, dev, 3), _x(T, dev, 3)),
    "chain_matmul_one_1d": lambda T, dev: _chain(T, _x(T, dev, 3)),
    "chain_matmul_shapes": lambda T, dev: _chain(T, _x(T, dev, *A), _x(T, dev, *A)),
    "chain_matmul_dtypes": lambda T, dev: _chain(T, _x(T, dev, *A),
                                                 _x(T, dev, *B, dtype="float64")),
    "chain_matmul_dtype_before_shape": lambda T, dev: _chain(
        T, _x(T, dev, *A), _x(T, dev, *A, dtype="float64"), _x(T, dev, *B)),
    # arguments that are not tensors (method forms count positions without self)
    "outer_list": lambda T, dev: T.outer([1.0], _x(T, dev, 3)),
    "outer_int_vec2": lambda T, dev: T.outer(_x(T, dev, 3), 2),
    "outer_method_list": lambda T, dev: _x(T, dev, 3).outer([1.0]),
    "ger_list": lambda T, dev: _quiet(lambda: T.ger([1.0], _x(T, dev, 3))),
    "kron_float": lambda T, dev: T.kron(_x(T, dev, 3), 2.0),
    "kron_method_int": lambda T, dev: _x(T, dev, 3).kron(1),
    "cross_list": lambda T, dev: T.cross(_x(T, dev, 3), [1, 2, 3], dim=0),
    "cross_method_int": lambda T, dev: _x(T, dev, 3).cross(1),
    "trace_list": lambda T, dev: T.trace([[1.0]]),
    "baddbmm_list": lambda T, dev: T.baddbmm(_x(T, dev, 3), [1], _x(T, dev, 3)),
    "baddbmm_method_int": lambda T, dev: _x(T, dev, 3, 3).baddbmm(1, _x(T, dev, 3)),
    "addbmm_float_input": lambda T, dev: T.addbmm(1.0, _x(T, dev, 3), _x(T, dev, 3)),
    "addbmm_method_int": lambda T, dev: _x(T, dev, 3, 3).addbmm(_x(T, dev, 3), 1),
    "addmv_int_vec": lambda T, dev: T.addmv(_x(T, dev, 3), _x(T, dev, 3), 3),
    "addmv_method_int": lambda T, dev: _x(T, dev, 3).addmv(_x(T, dev, 3, 3), 2),
    "addmv__method_int": lambda T, dev: _x(T, dev, 3).addmv_(_x(T, dev, 3, 3), 2),
    "addr_int_vec1": lambda T, dev: T.addr(_x(T, dev, 3), 1, _x(T, dev, 3)),
    "addr_method_int": lambda T, dev: _x(T, dev, 3, 3).addr(_x(T, dev, 3), 1),
    "vdot_list": lambda T, dev: T.vdot(_x(T, dev, 3), [1.0]),
    "vdot_method_int": lambda T, dev: _x(T, dev, 3).vdot(1),
    "inner_float": lambda T, dev: T.inner(_x(T, dev, 3), 2.0),
    "inner_method_int": lambda T, dev: _x(T, dev, 3).inner(1),
    "chain_matmul_int": lambda T, dev: _chain(T, _x(T, dev, 3, 3), 3),
    "chain_matmul_int_first": lambda T, dev: _chain(T, 1, _x(T, dev, 3, 3)),
}

test_misuse = catalogue_test(CASES)


def _out(T: Any, dev: str, dtype: str) -> Any:
    return T.empty(0, dtype=getattr(T, dtype), device=dev)


OUT_CASES: dict[str, Case] = {
    f"{name}_out_{dtype}": (lambda T, dev, f=f, dtype=dtype: f(T, dev, _out(T, dev, dtype)))
    for name, f in {
        "outer": lambda T, dev, o: T.outer(_x(T, dev, 3), _x(T, dev, 2), out=o),
        "ger": lambda T, dev, o: _quiet(lambda: T.ger(_x(T, dev, 3), _x(T, dev, 2), out=o)),
        "kron": lambda T, dev, o: T.kron(_x(T, dev, *A), _x(T, dev, 2), out=o),
        "cross": lambda T, dev, o: T.cross(_x(T, dev, 2, 3), _x(T, dev, 2, 3), dim=1, out=o),
        "tensordot": lambda T, dev, o: T.tensordot(_x(T, dev, *A), _x(T, dev, *B), 1, out=o),
        "baddbmm": lambda T, dev, o: T.baddbmm(_x(T, dev, 2, 3, 5), _x(T, dev, 2, 3, 4),
                                               _x(T, dev, 2, 4, 5), out=o),
        "addbmm": lambda T, dev, o: T.addbmm(_x(T, dev, 3, 5), _x(T, dev, 2, 3, 4),
                                             _x(T, dev, 2, 4, 5), out=o),
        "addbmm_no_batches": lambda T, dev, o: T.addbmm(_x(T, dev, 3, 5), _x(T, dev, 0, 3, 4),
                                                        _x(T, dev, 0, 4, 5), out=o),
        "addmv": lambda T, dev, o: T.addmv(_x(T, dev, 2), _x(T, dev, *A), _x(T, dev, 3), out=o),
        "addr": lambda T, dev, o: T.addr(_x(T, dev, *A), _x(T, dev, 2), _x(T, dev, 3), out=o),
        "vdot": lambda T, dev, o: T.vdot(_x(T, dev, 3), _x(T, dev, 3), out=o),
        "inner": lambda T, dev, o: T.inner(_x(T, dev, *A), _x(T, dev, *A), out=o),
        "inner_0d": lambda T, dev, o: T.inner(T.tensor(2.0, device=dev), _x(T, dev, *A), out=o),
        "chain_matmul": lambda T, dev, o: _chain(T, _x(T, dev, *A), _x(T, dev, *B), out=o),
    }.items()
    for dtype in ("float32", "float64", "int64", "float16")
}
OUT_CASES["outer_out_grad"] = lambda T, dev: T.outer(
    _x(T, dev, 3).requires_grad_(), _x(T, dev, 2), out=_out(T, dev, "float32"))

test_misuse_out = catalogue_test(OUT_CASES)
