"""bench/bench_gpu.py and bench/gpu_check.sh: arguments, the no-GPU path (nothing measured,
RESULTS.md untouched), the report and its RESULTS.md section, the JUnit counts, a dry run of the
check script's stages, and a short real run of the benchmark whenever a real GPU is present."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograd_gpu.backends import cuda_support

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import bench_core  # noqa: E402
import bench_gpu  # noqa: E402


def _real_gpu() -> bool:
    cp = cuda_support._cupy()
    return cp is not None and not getattr(cp, "__autograd_gpu_fake__", False) and \
        cuda_support.is_available()


REAL_GPU = _real_gpu()


@pytest.fixture
def results_md(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """bench_core writes RESULTS.md here instead of into bench/."""
    path = tmp_path / "RESULTS.md"
    monkeypatch.setattr(bench_core, "RESULTS", path)
    return path


# ---- arguments --------------------------------------------------------------------------------

def test_defaults_and_quick() -> None:
    args = bench_gpu.parse_args([])
    assert args.only == bench_gpu.SECTIONS
    assert (args.log2n, args.reps, args.inner, args.write, args.require_gpu) == (26, 15, 10,
                                                                                 False, False)
    quick = bench_gpu.parse_args(["--quick", "--only", "mlp,kernels", "--log2n", "14"])
    assert quick.only == ("mlp", "kernels")
    assert (quick.log2n, quick.reps, quick.inner, quick.batches) == (14, 5, 3, 3)
    assert bench_gpu.parse_args(["--quick", "--reps", "9"]).reps == 9


@pytest.mark.parametrize("argv", [["--only", "kernels,foo"], ["--only", ""], ["--log2n", "40"],
                                  ["--reps", "0"], ["--bogus"]])
def test_bad_arguments_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        bench_gpu.parse_args(argv)
    assert info.value.code == 2
    assert "error" in capsys.readouterr().err


# ---- no GPU: say why, measure nothing, write nothing ------------------------------------------

def test_without_gpu_nothing_is_measured_or_written(
        tmp_path: Path, results_md: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(bench_gpu, "gpu_status", lambda: "CuPy sees 0 CUDA devices")
    report = tmp_path / "report.md"
    assert bench_gpu.main(["--write", "--report", str(report)]) == 0
    out = capsys.readouterr()
    assert out.out == ""
    assert "no CUDA GPU here: CuPy sees 0 CUDA devices" in out.err
    assert "RESULTS.md was not touched" in out.err
    assert not results_md.exists() and not report.exists()
    assert bench_gpu.main(["--require-gpu", "--write"]) == bench_gpu.EXIT_NO_GPU == 77
    assert not results_md.exists()


@pytest.mark.skipif(bench_gpu.gpu_status() is None, reason="CuPy sees a GPU here: no no-GPU path")
def test_script_without_gpu_exits_cleanly() -> None:
    before = (ROOT / "bench" / "RESULTS.md").read_bytes()
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_gpu.py"), "--write"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    assert "bench_gpu: no CUDA GPU here" in proc.stderr
    assert (ROOT / "bench" / "RESULTS.md").read_bytes() == before


# ---- the report and its RESULTS.md section ----------------------------------------------------

ENV = {"gpu": "NVIDIA H100 80GB HBM3", "compute_capability": "9.0", "sms": 132,
       "gpu_mem_gib": 79.2, "driver": "580.159.04", "cuda_driver_api": "13.0",
       "cuda_runtime": "13.0", "cupy": "14.2.0", "torch": "2.11.0+cu130", "torch_cuda": "13.0",
       "commit": "abc1234"}


def _results() -> dict[str, dict[str, object]]:
    relu = {"op": "relu", "api": "kernels", "kind": "elementwise", "shape": [67108864],
            "cupy_builtin": True, "ours_ms": 0.19, "ours_gbps": 2825.0, "ours_pct_of_copy": 94.2,
            "aim_pct_of_copy": 85, "meets_aim": True, "cupy_ms": 0.2, "cupy_gbps": 2684.0,
            "torch_ms": 0.19, "torch_gbps": 2825.0}
    lse = {"op": "logsumexp (last dim)", "api": "kernels", "kind": "reduction",
           "shape": [8192, 8192], "cupy_builtin": False, "ours_ms": 0.2, "ours_gbps": 1342.0,
           "ours_pct_of_copy": 44.7, "aim_pct_of_copy": 80, "meets_aim": False}
    broken = {"op": "where", "api": "Tensor", "kind": "elementwise", "shape": [67108864],
              "error": "AssertionError: ours disagrees"}
    return {
        "kernels": {"copy": {"cupy y[...] = x": 3001.0}, "copy_gbps": 3001.0,
                    "rows": [relu, lse, broken], "failures": ["where [Tensor]: AssertionError"]},
        "latency": {"rows": [{"op": "add", "shape": [1], "mode": "fwd_bwd", "ours_us": 40.0,
                              "torch_us": 30.0, "ratio_vs_torch": 1.33, "meets_aim": True}],
                    "failures": []},
        "mlp": {"rows": [{"batch": 128, "ours_ms": 0.9, "torch_ms": 0.6, "ratio_vs_torch": 1.5,
                          "meets_aim": False}], "failures": []},
    }


def test_report_states_the_setup_and_every_row() -> None:
    args = bench_gpu.parse_args(["--quick"])
    text = bench_gpu.render_report(ENV, _results(), args, ["torch columns empty: x"],
                                   date="2026-11-22")
    assert text.startswith(bench_gpu.HEADING + "\n")
    for fact in ("NVIDIA H100 80GB HBM3", "driver 580.159.04", "CuPy 14.2.0",
                 "PyTorch 2.11.0+cu130", "Date: 2026-11-22", "commit abc1234", "--quick"):
        assert fact in text
    assert "| relu | cuda_kernels | 67108864 | 2825 | 94% | >= 85% met | 2684 | 0.95 |" in text
    assert "| logsumexp (last dim) | cuda_kernels | 8192x8192 | 1342 | 45% | >= 80% **not met**" \
        in text
    assert "| where | Tensor API | 67108864 | FAILED |" in text
    assert "| add | 1 | fwd+bwd | 40.0 | 30.0 | 1.33 | met |" in text
    assert "| 128 | 0.900 | 0.600 | 1.50 | **not met** |" in text
    assert "- where [Tensor]: AssertionError" in text and "- torch columns empty: x" in text
    # NOTE: write_section ends a section at the next "## " heading: none may hide inside.
    assert "\n## " not in text


def test_write_refreshes_only_the_gpu_section(results_md: Path) -> None:
    results_md.write_text("# Benchmark results\n\n## Core\n\ncore table\n\n"
                          f"{bench_gpu.HEADING}\n\nold gpu numbers\n\n## Training step\n\nmlp\n")
    text = bench_gpu.render_report(ENV, _results(), bench_gpu.parse_args([]), date="2026-11-22")
    bench_core.write_section(bench_gpu.HEADING, text)
    written = results_md.read_text()
    assert "old gpu numbers" not in written and "NVIDIA H100 80GB HBM3" in written
    assert "## Core\n\ncore table\n" in written and written.endswith("## Training step\n\nmlp\n")
    assert written.count(bench_gpu.HEADING) == 1


# ---- JUnit counts for gpu_check.sh ------------------------------------------------------------

JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="7">
<testcase classname="tests.ops.test_ops" name="test_op[cuda-relu]" time="0.1"/>
<testcase classname="tests.ops.test_ops" name="test_op[cpu-relu]" time="0.1"/>
<testcase classname="tests.ops.test_ops" name="test_op[cuda-exp]" time="0.1">
  <failure message="assert 1 == 2">trace</failure></testcase>
<testcase classname="tests.backends.test_cuda_kernels" name="test_unary" time="0.1">
  <skipped type="pytest.skip" message="no CUDA GPU">skip</skipped></testcase>
<testcase classname="tests.test_device" name="test_device_string[cuda:1]" time="0.1"/>
<testcase classname="tests.test_x" name="test_y" time="0.1">
  <error message="fixture">boom</error></testcase>
<testcase classname="tests.test_x" name="test_z" time="0.1">
  <skipped type="pytest.skip" message="cpu only">skip</skipped></testcase>
</testsuite></testsuites>
"""


def test_junit_summary_counts_cuda_tests(tmp_path: Path) -> None:
    path = tmp_path / "junit.xml"
    path.write_text(JUNIT)
    summary = bench_gpu.junit_summary(path)
    assert summary["counts"]["all"] == {"passed": 3, "failed": 1, "error": 1, "skipped": 2}
    assert summary["counts"]["cuda"] == {"passed": 1, "failed": 1, "error": 0, "skipped": 1}
    assert summary["failed"] == ["tests.ops.test_ops::test_op[cuda-exp]",
                                 "tests.test_x::test_y"]
    assert summary["cuda_skip_reasons"] == {"no CUDA GPU": 1}
    assert summary["gpu_only"] == ["tests.ops.test_ops::test_op[cuda-exp]"]
    text = bench_gpu.format_junit_summary(summary)
    assert "failed on CUDA only (the CPU twin passed): 1" in text
    assert summary["untwinned"] == ["tests.test_x::test_y"]
    assert "failed without a device parameter (no twin; read each): 1\n  tests.test_x::test_y" \
        in text
    assert text.splitlines()[:2] == ["all: 3 passed, 1 failed, 1 error, 2 skipped",
                                     "cuda: 1 passed, 1 failed, 0 error, 1 skipped"]
    assert bench_gpu.main(["--junit-summary", str(path)]) == 0


# ---- gpu_check.sh ----------------------------------------------------------------------------

SCRIPT = ROOT / "bench" / "gpu_check.sh"


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_gpu_check_script_parses() -> None:
    proc = subprocess.run(["bash", "-n", str(SCRIPT)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
@pytest.mark.skipif(bench_gpu.gpu_status() is None,
                    reason="CuPy sees a GPU here: the bench stage would run the full benchmark "
                           "(gpu_check.sh runs it itself)")
def test_gpu_check_dry_run_reports_every_stage(tmp_path: Path) -> None:
    out = tmp_path / "report"
    env = dict(os.environ, OUT=str(out), PYTHON=sys.executable, GPU_CHECK_STAGES="bench,train")
    before = (ROOT / "bench" / "RESULTS.md").read_bytes()
    proc = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, env=env,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = (out / "summary.md").read_text()
    assert proc.stdout == summary
    rows = {line.split(" | ")[0][2:]: line.split(" | ")[1]
            for line in summary.splitlines() if line.startswith("| ") and " | " in line}
    assert rows == {"stage": "status", "env": "PASS", "bench": "SKIPPED", "train": "SKIPPED"}
    assert "no CUDA GPU here" in summary and "## Environment" in summary
    assert not (out / "RESULTS.md").exists()
    assert (ROOT / "bench" / "RESULTS.md").read_bytes() == before
    # NOTE: the device tool brings back at most 8 files from the report folder.
    assert len(list(out.iterdir())) <= 8


# ---- a short real run, whenever a real GPU is present -----------------------------------------

@pytest.mark.skipif(not REAL_GPU, reason="no CUDA GPU (real CuPy and device)")
def test_short_run_on_the_gpu(tmp_path: Path, results_md: Path,
                              capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "report.md"
    rc = bench_gpu.main(["--quick", "--log2n", "16", "--report", str(report)])
    out = capsys.readouterr()
    assert rc == 0, out.err[-4000:]
    rows = [json.loads(line) for line in out.out.splitlines()]
    assert {r["section"] for r in rows} == set(bench_gpu.SECTIONS)
    assert all("error" not in r for r in rows), [r for r in rows if "error" in r]
    assert all(r["env"]["gpu"] and r["env"]["cupy"] for r in rows)
    kernels = [r for r in rows if r["section"] == "kernels" and r["op"] != "copy"]
    assert kernels and all(r["ours_gbps"] > 0 for r in kernels)
    text = report.read_text()
    assert text.startswith(bench_gpu.HEADING) and "### MLP training step" in text
    assert not results_md.exists()

