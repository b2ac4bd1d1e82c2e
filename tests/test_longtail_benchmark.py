"""``utils.benchmark`` against ``torch.utils.benchmark``: Measurement statistics and printout,
``Compare`` tables (byte for byte on the same measurements), and ``Timer`` timing real work
(block sizes, run counts, threads, the accelerator synchronised)."""

from __future__ import annotations

import re
from typing import Any

import pytest
import torch
import torch.utils.benchmark as tb

import autograd_gpu as ag
from autograd_gpu.utils import benchmark as ob

_TIMES = [1.234e-5, 1.3e-5, 1.25e-5, 1.28e-5, 1.5e-5]


def _spec(lib: Any, **kw: Any) -> Any:
    kw.setdefault("stmt", "x + 1")
    kw.setdefault("setup", "x = torch.ones(4)")
    return lib.TaskSpec(**kw)


def _measurements(lib: Any) -> list[Any]:
    out = []
    for sub in ("float", "int"):
        for n in (1, 4):
            spec = _spec(lib, label="add", sub_label=sub, description=f"n={n}", env="e1")
            times = [t * n * (2 if sub == "int" and i == 0 else 1) for i, t in enumerate(_TIMES)]
            out.append(lib.Measurement(100, times, spec))
    out.append(lib.Measurement(10, [3e-6, 1e-6], _spec(lib, label="add", sub_label="float",
                                                      description="n=1", num_threads=4,
                                                      env="e2")))
    out.append(lib.Measurement(1, [2e-3, 2.1e-3], _spec(lib, label="mul", description="big")))
    return out


def _body(m: Any) -> str:
    """A Measurement's printout without its first line (which holds its address)."""
    return repr(m).split("\n", 1)[1]


@pytest.mark.parametrize("spec", [
    {}, {"label": "L", "sub_label": "s"}, {"stmt": "a\nb", "sub_label": "sl", "description": "d",
                                           "setup": "s1\ns2"},
    {"stmt": "a", "setup": "pass", "num_threads": 2, "description": "d"},
])
@pytest.mark.parametrize("times", [[2.5e-3], [2.5e-3, 3e-3], _TIMES, [2.5e-3, 3e-3, 9e-3, 1e-3,
                                                                       1e-2], [4e-9] * 6])
def test_measurement_reads_as_pytorchs(spec: dict[str, Any], times: list[float]) -> None:
    ours, theirs = (lib.Measurement(1000, list(times), _spec(lib, **spec)) for lib in (ob, tb))
    assert _body(ours) == _body(theirs)
    assert re.fullmatch(r"<autograd_gpu\.utils\.benchmark\.utils\.common\.Measurement object "
                        r"at 0x[0-9a-f]+>", repr(ours).split("\n", 1)[0])
    for name in ("mean", "median", "iqr"):
        assert getattr(ours, name) == pytest.approx(getattr(theirs, name), rel=1e-6)
    assert ours.times == pytest.approx(theirs.times)
    for name in ("significant_figures", "has_warnings", "title", "env", "as_row_name", "label",
                 "stmt", "num_threads", "number_per_run"):
        assert getattr(ours, name) == getattr(theirs, name), name
    assert ours.meets_confidence(0.2) == theirs.meets_confidence(0.2)


def test_merge_pools_replicates() -> None:
    for lib in (ob, tb):
        spec = _spec(lib)
        merged = lib.Measurement.merge([lib.Measurement(10, [1e-3], spec),
                                        lib.Measurement(10, [2e-3], spec)])
        assert len(merged) == 1 and merged[0].number_per_run == 1
        assert merged[0].times == pytest.approx([1e-4, 2e-4])


@pytest.mark.parametrize("options", [(), ("trim_significant_figures",), ("highlight_warnings",),
                                     ("trim_significant_figures", "highlight_warnings"),
                                     ("colorize",), ("colorize_rowwise",)])
def test_compare_prints_as_pytorch(options: tuple[str, ...]) -> None:
    tables = []
    for lib in (ob, tb):
        c = lib.Compare(_measurements(lib))
        for opt in options:
            c.colorize(rowwise=True) if opt == "colorize_rowwise" else getattr(c, opt)()
        tables.append(str(c))
    assert tables[0] == tables[1]


def test_compare_takes_measurements_only() -> None:
    for lib in (ob, tb):
        with pytest.raises(ValueError, match="Expected an instance of `Measurement`"):
            lib.Compare([1])


def test_compare_without_descriptions_prints() -> None:
    """NOTE: PyTorch raises TypeError here; one empty-headed column is printed instead."""
    text = str(ob.Compare([ob.Measurement(1, [1e-3, 2e-3], _spec(ob))]))
    assert "x + 1" in text and "Times are in milliseconds (ms)." in text


def test_timer_timeit_runs_the_statement() -> None:
    calls = []
    m = ob.Timer("f()", globals={"f": lambda: calls.append(1)}).timeit(50)
    assert m.number_per_run == 50 and len(m.raw_times) == 1 and m.median > 0
    assert len(calls) == 50 + 2  # NOTE: a warm-up of max(50 // 100, 2) runs first
    assert "50 runs ," in repr(m)


def test_timer_blocked_autorange_on_our_tensors() -> None:
    x = ag.ones(32, 32)
    m = ob.Timer("x @ x", globals={"x": x}, label="mm", sub_label="32",
                 description="cpu").blocked_autorange(min_run_time=0.05)
    assert m.number_per_run >= 1 and sum(m.raw_times) >= 0.05
    assert 0 < m.median < 0.05 and m.title == "mm: 32"
    assert "torch" not in ob.Timer("pass")._globals or ob.Timer("pass")._globals["torch"] is ag


def test_timer_setup_and_torch_global() -> None:
    m = ob.Timer("y.sum()", setup="y = torch.ones(8)").timeit(10)
    assert m.setup == "y = torch.ones(8)" and m.median > 0


def test_timer_adaptive_autorange_stops() -> None:
    m = ob.Timer("sum(range(50))").adaptive_autorange(threshold=0.5, max_run_time=0.2)
    assert len(m.raw_times) >= 1 and sum(m.raw_times) <= 1.0


def test_timer_pins_threads_while_timing() -> None:
    seen = []
    before = ag.get_num_threads()
    ob.Timer("f()", globals={"f": lambda: seen.append(ag.get_num_threads())},
             num_threads=2).timeit(3)
    assert set(seen) == {2} and ag.get_num_threads() == before


def test_timer_refusals_as_pytorch() -> None:
    for lib in (ob, tb):
        with pytest.raises(ValueError, match="Currently only a `str` stmt is supported."):
            lib.Timer(lambda: 0)
        with pytest.raises(ValueError, match="global_setup is C\\+\\+ only"):
            lib.Timer("pass", global_setup="int x;")
        with pytest.raises(NotImplementedError, match="See `Timer.blocked_autorange.`"):
            lib.Timer("pass").autorange()


def test_default_timer_synchronises_the_accelerator(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    monkeypatch.setattr(ag.accelerator, "is_available", lambda: True)
    monkeypatch.setattr(ag.accelerator, "synchronize", lambda *a: calls.append(a))
    ob.Timer("pass").timeit(5)
    assert len(calls) >= 4  # NOTE: before and after the warm-up and the timed block
    assert torch.__version__  # the oracle is here: the comparisons above ran against it
