"""Misuse catalogue: the manip family (``functions/manip*.py``). Every refusal PyTorch makes
on these functions' arguments: tensors of too few dims, dims out of range or equal, bad
shifts, rotation planes, negative or wrong-sized repeats, sections and split indices, empty
tensor lists, mixed dtypes in ``meshgrid``, non-vectors in ``cartesian_prod`` and
``combinations``, ``block_diag`` of 3-D tensors, ``diff``'s prepend/append shapes, ``unfold``
windows, ``as_strided`` geometries out of the storage, index dtypes, and ``out=`` with
autograd; plus the legal corners next to them (wrapped dims, indices past the end, empty
results) and argument types (``flip(x, 0)``, float diagonals).
"""

from __future__ import annotations

from typing import Any

from tests.misuse._catalogue import Case, catalogue_test


def _x(T: Any, dev: str, *shape: int, grad: bool = False) -> Any:
    """``arange`` of ``shape`` (float64 when it takes a gradient)."""
    n = 1
    for s in shape:
        n *= s
    dtype = T.float64 if grad else T.float32
    return T.arange(n, dtype=dtype, device=dev).reshape(shape).requires_grad_(grad)


def _i(T: Any, data: Any, dtype: str = "int64") -> Any:
    """An index tensor on the CPU (PyTorch's requirement for ``tensor_split``)."""
    return T.tensor(data, dtype=getattr(T, dtype))


CASES: dict[str, Case] = {
    # triangles
    "tril_1d": lambda T, dev: T.tril(_x(T, dev, 3)),
    "triu_0d": lambda T, dev: _x(T, dev).triu(),
    "tril_float_diagonal": lambda T, dev: T.tril(_x(T, dev, 3, 3), 1.5),
    "tril_method_float_diagonal": lambda T, dev: _x(T, dev, 3, 3).tril(0.5),
    "triu_bool_diagonal": lambda T, dev: _x(T, dev, 3, 3).triu(True),
    "tril_out_grad": lambda T, dev: T.tril(_x(T, dev, 2, 2, grad=True), out=_x(T, dev, 2, 2)),
    "tril_out_dtype": lambda T, dev: T.tril(_x(T, dev, 2, 2), out=T.zeros(2, 2, dtype=T.int64,
                                                                          device=dev)),
    "triu_out_double": lambda T, dev: T.triu(_x(T, dev, 2, 2), out=_x(T, dev, 1).double()),
    "tril_inplace_leaf": lambda T, dev: _x(T, dev, 2, 2, grad=True).tril_(),
    "tril_inplace_1d": lambda T, dev: _x(T, dev, 3).tril_(),
    "tril_indices_negative_row": lambda T, dev: T.tril_indices(-1, 3),
    "triu_indices_negative_col": lambda T, dev: T.triu_indices(3, -2),
    "tril_indices_float": lambda T, dev: T.tril_indices(3, 3, dtype=T.float32),
    "triu_indices_int16": lambda T, dev: T.triu_indices(3, 3, dtype=T.int16),
    "tril_indices_bool": lambda T, dev: T.tril_indices(3, 3, dtype=T.bool),
    "triu_indices_far_offset": lambda T, dev: T.triu_indices(3, 4, 10),
    # rolls, flips, rotations
    "roll_no_shifts": lambda T, dev: T.roll(_x(T, dev, 3, 4), ()),
    "roll_misaligned": lambda T, dev: T.roll(_x(T, dev, 3, 4), (1, 2), 0),
    "roll_two_shifts_no_dims": lambda T, dev: _x(T, dev, 3, 4).roll((1, 2)),
    "roll_dim_out_of_range": lambda T, dev: _x(T, dev, 3, 4).roll(1, 2),
    "roll_0d_dim": lambda T, dev: T.roll(_x(T, dev), 1, 0),
    "roll_0d": lambda T, dev: T.roll(_x(T, dev), 1),
    "roll_float_shift": lambda T, dev: T.roll(_x(T, dev, 3), 1.5),
    "roll_empty": lambda T, dev: T.roll(_x(T, dev, 0, 3), 2, 0),
    "roll_list_args": lambda T, dev: T.roll(_x(T, dev, 3, 4), [1, -1], [1, 0]),
    "flip_int_dims": lambda T, dev: T.flip(_x(T, dev, 3, 4), 0),
    "flip_repeated_dim": lambda T, dev: _x(T, dev, 3, 4).flip(1, -1),
    "flip_out_of_range": lambda T, dev: T.flip(_x(T, dev, 3, 4), (2,)),
    "flip_0d_dim": lambda T, dev: T.flip(_x(T, dev), (-1,)),
    "fliplr_1d": lambda T, dev: T.fliplr(_x(T, dev, 3)),
    "flipud_0d": lambda T, dev: _x(T, dev).flipud(),
    "rot90_three_dims": lambda T, dev: T.rot90(_x(T, dev, 3, 4), 1, [0, 1, 1]),
    "rot90_1d": lambda T, dev: T.rot90(_x(T, dev, 3)),
    "rot90_same_dims": lambda T, dev: T.rot90(_x(T, dev, 3, 4), 1, [1, 1]),
    "rot90_wrapped_same_dims": lambda T, dev: T.rot90(_x(T, dev, 3, 4), 1, [0, -2]),
    "rot90_dim_out_of_range": lambda T, dev: T.rot90(_x(T, dev, 3, 4), 1, [0, 2]),
    "rot90_float_k": lambda T, dev: T.rot90(_x(T, dev, 3, 4), 1.5),
    "rot90_big_k": lambda T, dev: T.rot90(_x(T, dev, 2, 3), -7, (1, 0)),
    # repetition
    "repeat_interleave_negative": lambda T, dev: _x(T, dev, 3).repeat_interleave(-1),
    "repeat_interleave_2d_repeats": lambda T, dev: _x(T, dev, 3).repeat_interleave(
        T.tensor([[1]], device=dev)),
    "repeat_interleave_wrong_size": lambda T, dev: _x(T, dev, 3, 4).repeat_interleave(
        T.tensor([1, 2], device=dev), 0),
    "repeat_interleave_float_repeats": lambda T, dev: T.repeat_interleave(_i(T, [1.0, 2.0],
                                                                              "float32")),
    "repeat_interleave_negative_tensor": lambda T, dev: T.repeat_interleave(_i(T, [1, -2])),
    "repeat_interleave_indices_2d": lambda T, dev: T.repeat_interleave(_i(T, [[1]])),
    "repeat_interleave_indices_0d": lambda T, dev: T.repeat_interleave(_i(T, 3)),
    "repeat_interleave_output_size": lambda T, dev: _x(T, dev, 3, 4).repeat_interleave(
        2, 0, output_size=5),
    "repeat_interleave_tensor_output_size": lambda T, dev: _x(T, dev, 3, 4).repeat_interleave(
        T.tensor([1, 1, 1], device=dev), 0, output_size=5),
    "repeat_interleave_indices_output_size": lambda T, dev: T.repeat_interleave(
        _i(T, [2, 1]), output_size=3),
    "repeat_interleave_0d_dim": lambda T, dev: _x(T, dev).repeat_interleave(3, 0),
    "repeat_interleave_0d": lambda T, dev: T.repeat_interleave(_x(T, dev), 3),
    "repeat_interleave_dim_out_of_range": lambda T, dev: _x(T, dev, 3).repeat_interleave(2, 1),
    "tile_negative": lambda T, dev: _x(T, dev, 3, 4).tile(-1),
    "tile_int": lambda T, dev: T.tile(_x(T, dev, 3), 2),
    "tile_float": lambda T, dev: T.tile(_x(T, dev, 3), (2.0,)),
    # diagonals
    "diag_3d": lambda T, dev: T.diag(_x(T, dev, 2, 2, 2)),
    "diag_0d": lambda T, dev: _x(T, dev).diag(),
    "diag_out_dtype": lambda T, dev: T.diag(_x(T, dev, 3, grad=True), out=_x(T, dev, 3, 3)),
    "diag_out_grad": lambda T, dev: T.diag(_x(T, dev, 3, grad=True),
                                           out=_x(T, dev, 3, 3).double()),
    "diag_embed_same_dims": lambda T, dev: T.diag_embed(_x(T, dev, 3, 4), 0, 1, 1),
    "diag_embed_wrapped_same_dims": lambda T, dev: T.diag_embed(_x(T, dev, 3, 4), 0, -1, 2),
    "diag_embed_dim_out_of_range": lambda T, dev: T.diag_embed(_x(T, dev, 3, 4), 0, 0, 3),
    "diag_embed_0d": lambda T, dev: T.diag_embed(_x(T, dev)),
    "diagonal_same_dims": lambda T, dev: _x(T, dev, 3, 4).diagonal(0, 1, -1),
    "diagonal_out_of_range": lambda T, dev: T.diagonal(_x(T, dev, 3, 4), 0, 0, 2),
    "diagonal_1d": lambda T, dev: _x(T, dev, 3).diagonal(),
    "diagonal_far_offset": lambda T, dev: _x(T, dev, 3, 4).diagonal(-3),
    "diagflat_0d": lambda T, dev: T.diagflat(_x(T, dev)),
    # splits
    "tensor_split_0d": lambda T, dev: T.tensor_split(_x(T, dev), 2),
    "tensor_split_zero_sections": lambda T, dev: T.tensor_split(_x(T, dev, 4), 0),
    "tensor_split_negative_sections": lambda T, dev: _x(T, dev, 4).tensor_split(-2),
    "tensor_split_float_tensor": lambda T, dev: T.tensor_split(_x(T, dev, 4), _i(T, [1.0],
                                                                                "float32")),
    "tensor_split_int32_tensor": lambda T, dev: T.tensor_split(_x(T, dev, 4), _i(T, [1],
                                                                                "int32")),
    "tensor_split_2d_tensor": lambda T, dev: T.tensor_split(_x(T, dev, 4), _i(T, [[1]])),
    "tensor_split_dim_out_of_range": lambda T, dev: T.tensor_split(_x(T, dev, 4), 2, 1),
    "tensor_split_past_end": lambda T, dev: T.tensor_split(_x(T, dev, 3, 4), [3, 10], 1),
    "tensor_split_decreasing": lambda T, dev: T.tensor_split(_x(T, dev, 3, 4), [3, 1], 1),
    "tensor_split_negative_index": lambda T, dev: T.tensor_split(_x(T, dev, 3, 4), [-1, 2], 1),
    "tensor_split_pieces_in_place": lambda T, dev: [p.add_(1) for p in
                                                    T.tensor_split(_x(T, dev, 5), 2)],
    "hsplit_0d": lambda T, dev: T.hsplit(_x(T, dev), 2),
    "hsplit_indivisible": lambda T, dev: T.hsplit(_x(T, dev, 3, 4), 3),
    "hsplit_zero": lambda T, dev: _x(T, dev, 3, 4).hsplit(0),
    "vsplit_1d": lambda T, dev: T.vsplit(_x(T, dev, 3), 1),
    "vsplit_indivisible": lambda T, dev: T.vsplit(_x(T, dev, 3, 4), 2),
    "dsplit_2d": lambda T, dev: T.dsplit(_x(T, dev, 3, 4), 1),
    "dsplit_indivisible": lambda T, dev: T.dsplit(_x(T, dev, 1, 2, 3), 2),
    # stacks
    "hstack_empty": lambda T, dev: T.hstack([]),
    "vstack_empty": lambda T, dev: T.vstack([]),
    "row_stack_empty": lambda T, dev: T.row_stack([]),
    "dstack_empty": lambda T, dev: T.dstack([]),
    "column_stack_empty": lambda T, dev: T.column_stack([]),
    "hstack_mismatch": lambda T, dev: T.hstack([_x(T, dev, 3, 4), _x(T, dev, 2, 4)]),
    "vstack_mismatch": lambda T, dev: T.vstack([_x(T, dev, 3), _x(T, dev, 4)]),
    "hstack_out_grad": lambda T, dev: T.hstack([_x(T, dev, 3, grad=True)],
                                               out=_x(T, dev, 3).double()),
    "vstack_out_int": lambda T, dev: T.vstack([_x(T, dev, 3)], out=T.zeros(1, 3, dtype=T.int64,
                                                                           device=dev)),
    "dstack_out_double": lambda T, dev: T.dstack([_x(T, dev, 3)], out=_x(T, dev, 3).double()),
    "column_stack_3d": lambda T, dev: T.column_stack([_x(T, dev, 2, 2, 2), _x(T, dev, 2, 1, 2)]),
    # grids and combinations
    "meshgrid_dtypes": lambda T, dev: T.meshgrid(_x(T, dev, 3), _x(T, dev, 3).long(),
                                                 indexing="ij"),
    "meshgrid_bad_indexing": lambda T, dev: T.meshgrid(_x(T, dev, 3), indexing="yx"),
    "meshgrid_empty": lambda T, dev: T.meshgrid([], indexing="ij"),
    "meshgrid_0d": lambda T, dev: T.meshgrid(_x(T, dev), _x(T, dev, 3), indexing="xy"),
    "cartesian_prod_2d": lambda T, dev: T.cartesian_prod(_x(T, dev, 3), _x(T, dev, 2, 2)),
    "cartesian_prod_0d": lambda T, dev: T.cartesian_prod(_x(T, dev)),
    "cartesian_prod_none": lambda T, dev: T.cartesian_prod(),
    "cartesian_prod_empty": lambda T, dev: T.cartesian_prod(_x(T, dev, 3), _x(T, dev, 0)),
    "combinations_2d": lambda T, dev: T.combinations(_x(T, dev, 2, 2)),
    "combinations_negative": lambda T, dev: T.combinations(_x(T, dev, 3), -1),
    "combinations_zero": lambda T, dev: T.combinations(_x(T, dev, 3), 0),
    "combinations_empty": lambda T, dev: T.combinations(_x(T, dev, 0), 2),
    "combinations_empty_replacement": lambda T, dev: T.combinations(_x(T, dev, 0), 2, True),
    # broadcasting, blocks
    "broadcast_tensors_mismatch": lambda T, dev: T.broadcast_tensors(_x(T, dev, 3, 4),
                                                                     _x(T, dev, 3)),
    "broadcast_tensors_list": lambda T, dev: T.broadcast_tensors([_x(T, dev, 3)]),
    "broadcast_tensors_none": lambda T, dev: T.broadcast_tensors(),
    "broadcast_to_mismatch": lambda T, dev: T.broadcast_to(_x(T, dev, 3), (2, 4)),
    "block_diag_3d": lambda T, dev: T.block_diag(_x(T, dev, 2), _x(T, dev, 1, 2, 2)),
    "block_diag_none": lambda T, dev: T.block_diag(),
    "block_diag_empty": lambda T, dev: T.block_diag(_x(T, dev, 0), _x(T, dev, 0, 2)),
    # differences
    "diff_0d": lambda T, dev: T.diff(_x(T, dev)),
    "diff_negative_n": lambda T, dev: _x(T, dev, 3).diff(-1),
    "diff_prepend_ndim": lambda T, dev: T.diff(_x(T, dev, 3, 4), prepend=_x(T, dev, 4)),
    "diff_append_shape": lambda T, dev: T.diff(_x(T, dev, 3, 4), dim=0,
                                               append=_x(T, dev, 2, 3)),
    "diff_prepend_number": lambda T, dev: T.diff(_x(T, dev, 3), prepend=1.0),
    "diff_n0_prepend_ignored": lambda T, dev: T.diff(_x(T, dev, 3), 0, prepend=_x(T, dev, 2)),
    "diff_dim_out_of_range": lambda T, dev: T.diff(_x(T, dev, 3), dim=1),
    "diff_bool": lambda T, dev: T.diff(T.tensor([True, False, False, True], device=dev), 2),
    "diff_out_grad": lambda T, dev: T.diff(_x(T, dev, 3, grad=True), out=_x(T, dev, 2)),
    "diff_out_int": lambda T, dev: T.diff(_x(T, dev, 3), out=T.zeros(2, dtype=T.int64,
                                                                   device=dev)),
    "diff_n0_out_int": lambda T, dev: T.diff(_x(T, dev, 3), 0, out=T.zeros(3, dtype=T.int64,
                                                                          device=dev)),
    "diff_n0_out_grad": lambda T, dev: T.diff(_x(T, dev, 3, grad=True), 0,
                                              out=_x(T, dev, 3).double()),
    "diff_bool_out_int": lambda T, dev: T.diff(_x(T, dev, 3) > 0, out=T.zeros(
        2, dtype=T.int64, device=dev)),
    # strided views
    "unfold_too_big": lambda T, dev: _x(T, dev, 3, 4).unfold(1, 5, 1),
    "unfold_zero_step": lambda T, dev: _x(T, dev, 3, 4).unfold(1, 2, 0),
    "unfold_negative_size": lambda T, dev: _x(T, dev, 3, 4).unfold(0, -1, 0),
    "unfold_big_before_step": lambda T, dev: _x(T, dev, 3, 4).unfold(0, 5, -1),
    "unfold_0d_too_big": lambda T, dev: _x(T, dev).unfold(0, 2, 1),
    "unfold_dim_out_of_range": lambda T, dev: _x(T, dev, 3, 4).unfold(2, 1, 1),
    "as_strided_out_of_bounds": lambda T, dev: _x(T, dev, 3, 4).as_strided((3, 4), (4, 1), 1),
    "as_strided_view_out_of_bounds": lambda T, dev: _x(T, dev, 3, 4)[2:].as_strided((5,),
                                                                                   (2,)),
    "as_strided_negative_stride": lambda T, dev: T.as_strided(_x(T, dev, 6), (2,), (-1,)),
    "as_strided_lengths": lambda T, dev: _x(T, dev, 6).as_strided((2, 2), (1,)),
    "as_strided_negative_size": lambda T, dev: _x(T, dev, 6).as_strided((-1,), (1,)),
    "as_strided_negative_offset": lambda T, dev: _x(T, dev, 6).as_strided((2,), (1,), -1),
    "as_strided_negative_offset_first": lambda T, dev: _x(T, dev, 6).as_strided((100,), (1,),
                                                                               -1),
    "as_strided_empty_far": lambda T, dev: _x(T, dev, 6).as_strided((0, 2), (1, 1), 100),
    "as_strided_int": lambda T, dev: T.arange(6, device=dev).as_strided((2, 2), (1, 2), 2),
}

test_misuse = catalogue_test(CASES)
