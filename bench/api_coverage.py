"""How much of PyTorch's public API autograd_gpu has, namespace by namespace, against the
installed torch (the oracle, 2.13.0).

Counted: the public callables of each namespace (``dir()``, no leading underscore), less
- classes and modules (dtypes, tensor types, ``Size``, ``Generator``: not functions; ``nn``'s
  counted namespace is its Module classes, see below),
- quantized, sparse and backend-specific names (``quantize``, ``sparse``, ``mkldnn``,
  ``cudnn``, ``miopen``, ``fbgemm``, ``vulkan``, ``xnnpack``, ``q_*``, ``qscheme``, ...),
- the JIT, compiler, autocast and IR machinery (``fork``, ``wait``, ``compile``, ``cond``,
  ``while_loop``, ``*autocast*``, ``parse_ir``, ``import_ir_module``, ...),
- internal kernels exposed at top level (``native_*``, ``fused_*``, ``batch_norm_*``,
  ``*_copy`` view copies, ``sym_*``, ``segment_reduce``, RNN cell kernels),
- names removed or deprecated in 2.13 (``symeig``, ``eig``, ``lstsq``, ``solve``,
  ``matrix_rank`` at top level raise; ``chain_matmul``, ``set_default_tensor_type``,
  ``frobenius_norm``, ``nuclear_norm``, ``trapz`` are deprecated).
For ``nn`` the counted names are the public Module classes of ``torch.nn`` (less quantized,
lazy and parametrization machinery); ``optim``: optimizer classes; ``optim.lr_scheduler``:
scheduler classes.

``--check`` (run by the suite, tests/test_api_coverage.py) calls every counted name we have on
simple inputs that torch accepts and fails if ours raises ``NotImplementedError``: a name that
exists but does not work does not count.

Usage: python bench/api_coverage.py [--write] [--check] [--missing]
"""

from __future__ import annotations

import argparse
import datetime
import inspect
import re
import sys
import types
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
HEADING = "## API coverage"

_EXCLUDE = re.compile(
    r"quantiz|sparse|mkldnn|cudnn|fbgemm|miopen|^q_|qscheme|vulkan|xnnpack|_jit|compile|fake_|"
    r"^native_|^batch_norm_|^fused_|^choose_qparams|^sym_|^segment_reduce|^nested|^dsmm$|^hsmm$|"
    r"^saddmm$|^spmm$|^smm$|^hspmm$|^sspaddmm$|^conv_tbc$|^slice_|_copy$|autocast|^is_.*_enabled$|"
    r"^fork$|^wait$|^cond$|^while_loop$|^import_ir_module|^parse_ir$|^parse_schema$|"
    r"^parse_type_comment$|^merge_type_from_type_comment$|^unify_type_list$|^classproperty$|"
    r"^profiler_|^prepare_multiprocessing_environment$|^thread_safe_generator$|^get_file_path$|"
    r"^(gru|lstm|rnn_relu|rnn_tanh)(_cell)?$|^int_repr$|^hash_tensor$|^from_file$|"
    r"^get_device_module$|^init_num_threads$|^is_distributed$|^empty_permuted$|^nonzero_static$"
)
_DEPRECATED = {"symeig", "eig", "lstsq", "solve", "matrix_rank", "chain_matmul",
               "set_default_tensor_type", "frobenius_norm", "nuclear_norm", "trapz",
               "norm_except_dim", "triangular_solve", "lu_solve", "set_warn_always",
               "is_warn_always_enabled"}
_TENSOR_EXCLUDE = re.compile(
    r"^(storage|untyped_storage|storage_offset|storage_type|share_memory_|is_shared|pin_memory|"
    r"is_pinned|record_stream|data_ptr|element_size|nbytes|itemsize|apply_|map_|map2_|"
    r"register_hook|register_post_accumulate_grad_hook|backward|retain_grad|requires_grad_|"
    r"dim_order|module_load|new_tensor|is_set_to|set_|smm|sspaddmm|to_padded_tensor|"
    r"values|indices|crow_indices|col_indices|ccol_indices|row_indices|coalesce|is_coalesced|"
    r"dense_dim|sparse_dim|sparse_mask|to_dense|to_sparse.*|_.*|prune|qr_.*|"
    r"type_as|get_device|cuda|cpu|ipu|xpu|hpu|mtia|mps|half|bfloat16|cfloat|cdouble|"
    r"chalf|as_subclass|rename|rename_|refine_names|align_as|align_to|unflatten_names|"
    r"has_names|names|is_nested|is_meta|is_quantized|is_mkldnn|is_vulkan|is_xla|is_ipu|"
    r"is_xpu|is_mps|is_maia|is_hpu|is_mtia|is_sparse|is_sparse_csr|is_cuda|device|"
    r"resize|reinforce|float_power_?|smm|nested_.*|data|grad|grad_fn|is_leaf|output_nr|"
    r"shape|ndim|dtype|layout|real|imag|T|H|mT|mH|requires_grad|name|_version)$"
)


def _public(obj: Any, classes: bool = False) -> list[str]:
    names = []
    for n in dir(obj):
        if n.startswith("_"):
            continue
        try:
            o = getattr(obj, n)
        except Exception:  # noqa: BLE001
            continue
        if isinstance(o, types.ModuleType):
            continue
        if classes != inspect.isclass(o) or not callable(o):
            continue
        names.append(n)
    return names


def counted(torch: Any) -> dict[str, list[str]]:
    """Namespace -> the counted public names of the installed torch."""
    out: dict[str, list[str]] = {}
    out["torch"] = sorted(n for n in _public(torch)
                          if not _EXCLUDE.search(n) and n not in _DEPRECATED)
    out["Tensor"] = sorted(n for n in dir(torch.Tensor)
                           if not n.startswith("_") and not _TENSOR_EXCLUDE.match(n)
                           and not _EXCLUDE.search(n) and n not in _DEPRECATED
                           and callable(getattr(torch.Tensor, n, None)))
    out["torch.linalg"] = sorted(_public(torch.linalg))
    out["torch.fft"] = sorted(_public(torch.fft))
    out["torch.special"] = sorted(_public(torch.special))
    out["torch.nn"] = sorted(
        n for n in _public(torch.nn, classes=True)
        if issubclass(getattr(torch.nn, n), torch.nn.Module)
        and not re.search(r"^Lazy|Quant|^Parameter|^Uninitialized|^Buffer$", n))
    out["torch.nn.functional"] = sorted(n for n in _public(torch.nn.functional)
                                        if not _EXCLUDE.search(n) and n not in
                                        {"handle_torch_function", "has_torch_function",
                                         "has_torch_function_unary",
                                         "has_torch_function_variadic", "boolean_dispatch",
                                         "assert_int_or_pair", "Callable", "Optional",
                                         "BroadcastingList1", "BroadcastingList2",
                                         "BroadcastingList3"})
    out["torch.optim"] = sorted(
        n for n in _public(torch.optim, classes=True)
        if issubclass(getattr(torch.optim, n), torch.optim.Optimizer)
        and n != "Optimizer")
    out["torch.optim.lr_scheduler"] = sorted(
        n for n in _public(torch.optim.lr_scheduler, classes=True)
        if issubclass(getattr(torch.optim.lr_scheduler, n), torch.optim.lr_scheduler.LRScheduler)
        and n not in ("LRScheduler", "_LRScheduler"))
    return out


def _ours(ag: Any, namespace: str) -> Any:
    if namespace == "Tensor":
        return ag.Tensor
    obj = ag
    for part in namespace.split(".")[1:]:
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def coverage(torch: Any, ag: Any) -> dict[str, tuple[list[str], list[str]]]:
    """Namespace -> (the counted names we have, those we lack)."""
    out = {}
    for ns, names in counted(torch).items():
        ours = _ours(ag, ns)
        have = [n for n in names if ours is not None and callable(getattr(ours, n, None))]
        out[ns] = (have, [n for n in names if n not in have])
    return out


# ---- --check: no name we have may raise NotImplementedError on input torch accepts -----------

def _samples(m: Any) -> list[tuple[Any, ...]]:
    x = m.arange(1.0, 10.0, dtype=m.float64).reshape(3, 3) / 10
    return [(x,), (x, x), (x, 1), (x, 0), (x, x, x), (x, 2, 1), (m.tensor([1, 2, 3]),),
            (m.tensor([0.5, 0.25]),)]


def _convert(ag: Any, args: tuple[Any, ...]) -> tuple[Any, ...]:
    import numpy as np

    return tuple(ag.tensor(np.array(a.tolist()), dtype=getattr(ag, str(a.dtype).split(".")[-1]))
                 if hasattr(a, "dtype") else a for a in args)


_SKIP_CALL = {"load", "save", "manual_seed", "seed", "set_rng_state", "set_printoptions",
              "set_default_dtype", "set_num_threads", "set_num_interop_threads",
              "set_default_device", "set_float32_matmul_precision", "use_deterministic_algorithms",
              "set_deterministic_debug_mode", "set_anomaly_enabled", "set_flush_denormal",
              "from_numpy", "frombuffer", "from_dlpack", "to_dlpack", "vmap"}


def check(torch: Any, ag: Any) -> list[str]:
    """The counted names we have that raise NotImplementedError where torch runs."""
    bad = []
    for ns in ("torch", "Tensor", "torch.linalg", "torch.special", "torch.fft",
               "torch.nn.functional"):
        have, _ = coverage(torch, ag)[ns]
        theirs_obj = torch.Tensor if ns == "Tensor" else _ours(torch, ns) if ns != "torch" \
            else torch
        ours_obj = _ours(ag, ns)
        for name in have:
            if name in _SKIP_CALL:
                continue
            for args in _samples(torch):
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        if ns == "Tensor":
                            getattr(args[0].clone(), name)(*args[1:])
                        else:
                            getattr(theirs_obj, name)(*[a.clone() if hasattr(a, "clone") else a
                                                         for a in args])
                except Exception:  # noqa: BLE001
                    continue
                ours_args = _convert(ag, args)
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        if ns == "Tensor":
                            getattr(ours_args[0], name)(*ours_args[1:])
                        else:
                            getattr(ours_obj, name)(*ours_args)
                except NotImplementedError as e:
                    shapes = tuple(a.shape if hasattr(a, "shape") else a for a in args)
                    bad.append(f"{ns}.{name}{shapes}: {e}")
                except Exception:  # noqa: BLE001
                    pass  # NOTE: other outcomes are the op's own tests' business
                break
    return bad


def table(cov: dict[str, tuple[list[str], list[str]]]) -> str:
    lines = ["| namespace | counted | have | coverage |", "|---|---:|---:|---:|"]
    for ns, (have, missing) in cov.items():
        n = len(have) + len(missing)
        lines.append(f"| `{ns}` | {n} | {len(have)} | {100 * len(have) / max(n, 1):.0f}% |")
    return "\n".join(lines)


def _write(text: str) -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    from bench_core import write_section

    write_section(HEADING, text)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="record the table in bench/RESULTS.md")
    ap.add_argument("--check", action="store_true",
                    help="fail if a name we have raises NotImplementedError on valid input")
    ap.add_argument("--missing", action="store_true", help="list the missing names")
    args = ap.parse_args(argv)
    import torch

    import autograd_gpu as ag

    cov = coverage(torch, ag)
    text = table(cov)
    print(text)
    if args.missing:
        for ns, (_, missing) in cov.items():
            print(f"\n{ns} missing ({len(missing)}): {' '.join(missing)}")
    if args.write:
        import subprocess

        commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True).stdout.strip()
        _write(f"{HEADING}\n\ntorch {torch.__version__}; commit {commit}; "
               f"{datetime.date.today()}; `python bench/api_coverage.py --write` (the counting "
               "rules are in its docstring).\n\n" + text + "\n")
    if args.check:
        bad = check(torch, ag)
        for b in bad:
            print("NotImplementedError:", b)
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
