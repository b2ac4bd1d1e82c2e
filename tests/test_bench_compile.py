"""bench/bench_compile.py on tiny cases: its rows, report and exactness check (no timings are
asserted: the machine is shared and noisy)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import bench_compile as bc  # noqa: E402

TINY = {
    "small_adam": bc.Case("small_adam", (8, 16, 4), 8, "adam", reps=2, aim=0.5),
    "mlp_sgd": bc.Case("mlp_sgd", (8, 16, 4), 16, "sgd", reps=2, aim=0.9),
    "digits_epoch": bc.Case("digits_epoch", (64, 16, 10), 32, "adam", reps=1, samples=100),
}


def test_quick_run_rows_and_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "report.md"
    code = bc.main(["--quick", "--rounds", "1", "--torch-backends", "none", "--report",
                    str(report)], cases=TINY)
    assert code == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    for name, case in TINY.items():
        mine = [r for r in rows if r["case"] == name]
        check = next(r for r in mine if r.get("kind") == "check")
        assert check["exact"] and check["breaks"] == 0 and check["break_reasons"] == []
        assert check["losses_identical"] and check["params_identical"]
        assert check["grads_identical"] and check["optimizer_state_identical"]
        assert check["replayed_calls"] > 0 and check["torch_loss_max_rel_diff"] < 1e-5
        variants = {r["variant"]: r for r in mine if "variant" in r}
        module = set() if case.samples else {"ours_compiled_module"}
        assert set(variants) == {"ours_eager", "ours_compiled", "torch_eager"} | module
        if not case.samples:
            assert check["module_losses_identical"] and check["module_params_identical"]
        for r in variants.values():
            assert r["ms"] > 0 and r["cpu_ms"] >= 0 and r["min_ms"] <= r["ms"]
            assert r["unit"] == case.unit and r["device"] == "cpu"
        summary = next(r for r in mine if r.get("kind") == "summary")
        assert summary["aim"] == case.aim and summary["explain_breaks"] == 0
        assert summary["explain_replaying"] >= 1 and summary["exact"]
        assert (summary["meets_aim"] is None) == (case.aim is None)
        bd = [r for r in mine if r.get("kind") == "breakdown"]
        assert bool(bd) == (not case.samples)
        if bd:
            opt = {"adam": "Adam", "sgd": "SGD"}[case.opt]
            # NOTE: SGD's and Adam's updates are recorded with the step: only zero_grad is
            # called again (opaque)
            assert {"step_us", "call_overhead_us", "loads", "stores", "replayed array ops",
                    f"opaque {opt}.zero_grad", "torch_opt_step_alone_us"} <= set(bd[0])
            assert f"opaque {opt}.step" not in bd[0]
    text = report.read_text()
    assert text.count("bit for bit identical") == 3 and "| ours_compiled | cpu |" in text


class _Off:
    """A stand-in for a compiled step whose loss is off by a little."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn
        self._entries: dict[Any, Any] = {}

    def __call__(self, *args: Any) -> Any:
        return self.fn(*args) * 1.0000001

    def explain(self) -> Any:
        from autograd_gpu._compile import compile as real

        return real(self.fn).explain()  # NOTE: no recording, no breaks


def test_check_reports_a_difference(monkeypatch: pytest.MonkeyPatch) -> None:
    import autograd_gpu as ag

    monkeypatch.setattr(ag, "compile", _Off)
    row = bc.check_exact(TINY["small_adam"], steps=3, with_torch=False)
    assert not row["losses_identical"] and not row["exact"]
    assert row["params_identical"]  # the stand-in changes only what it returns


def test_backend_that_cannot_compile_in_time_is_not_run() -> None:
    secs, why = bc.try_backend(TINY["small_adam"], "inductor", timeout=0.01)
    assert secs is None and why == "did not compile within 0.01 s on this machine"


@pytest.mark.parametrize("argv", [["--cases", "nope"], ["--cases", ""], ["--rounds", "0"]])
def test_bad_arguments_exit_2(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as info:
        bc.parse_args(argv)
    assert info.value.code == 2


def test_defaults() -> None:
    args = bc.parse_args([])
    assert (args.rounds, args.torch_backends, args.cases) == (15, ("inductor",), list(bc.CASES))
    quick = bc.parse_args(["--quick", "--torch-backends", "eager,aot_eager"])
    assert (quick.rounds, quick.torch_backends) == (5, ("eager", "aot_eager"))
    assert bc.parse_args(["--torch-backends", "none"]).torch_backends == ()


@pytest.mark.skipif(not __import__("autograd_gpu").cuda.is_available(), reason="no CUDA device "
                    "(AUTOGRAD_GPU_FAKE_CUDA=1 runs this on the stand-in)")
def test_cuda_rows(capsys: pytest.CaptureFixture[str]) -> None:
    rows = bc.run_case(TINY["small_adam"], 1, (), 10.0, {}, cuda=("ours",))
    row = next(r for r in rows if r.get("variant") == "ours_eager_cuda")
    assert row["device"] == "cuda" and row["ms"] > 0 and "vs_torch_eager" not in row
    row = next(r for r in rows if r.get("variant") == "ours_compiled_cuda")
    assert row["device"] == "cuda" and row["ms"] > 0
