#!/usr/bin/env bash
# gpu_check.sh: everything a lent GPU machine should run, end to end, in one go (issue #4).
#
#   bash bench/gpu_check.sh
#
# Stages: the environment (nvidia-smi, versions), the whole test suite (CUDA runs wherever a GPU
# is present), bench/bench_gpu.py (--write: refreshes "## GPU (CUDA)" in bench/RESULTS.md), and a
# 5-epoch CUDA training run of the digits job. A failing stage never stops the next; each one
# reports PASS, FAIL, TIMEOUT or SKIPPED (with the reason) in summary.md. Nothing is installed:
# the GPU machine has no network. Expected time on an H100: a few minutes; every stage has a
# time limit. The defaults add up to 13 minutes at worst; under a 10-minute call give smaller
# ones (e.g. TESTS_TIMEOUT=270 BENCH_TIMEOUT=60 KERNELS_TIMEOUT=25 MEMORY_TIMEOUT=30
# COMPILE_TIMEOUT=45 TRAIN_TIMEOUT=30: 9.2 minutes). Measured on an H200 machine (2026-11-28, evening): the suite
# reached 99% in 240 s; bench 37 s, each fused-kernel benchmark 17-23 s, memory plans 17 s,
# training 9 s.
#
# Report folder ${OUT:-bench/gpu_report} (on the device tool, $OUT is the folder that comes
# back; it brings back 8 files at most, so this script writes no more than these 8):
#   summary.md       environment, stage table, test counts (all and CUDA), tails of failures
#   tests.log        pytest's output               junit.xml       pytest's JUnit XML
#   bench_gpu.jsonl  one JSON line per measurement bench_gpu.log   benchmark progress, report
#   bench_gpu.md     the benchmark's markdown      train.log       the training run
#   RESULTS.md       bench/RESULTS.md after the benchmark wrote it (only when a GPU ran)
#
# Environment: PYTHON (default python3), OUT, GPU_CHECK_STAGES (default "tests,bench,kernels,train";
# the environment is always recorded), TESTS_TIMEOUT / BENCH_TIMEOUT / KERNELS_TIMEOUT (each of
# the fused-kernel benchmarks) / MEMORY_TIMEOUT (the memory-budget benchmark) / COMPILE_TIMEOUT
# (bench_compile) / TRAIN_TIMEOUT in seconds (default 300 / 120 / 40 / 60 / 90 / 50),
# PYTEST_ARGS (default: see the tests stage) and BENCH_ARGS (extra arguments).
# Exit status: 0 when no stage failed or timed out (skipped stages are fine), else 1.

set -uo pipefail  # NOTE: no -e: a failing stage is recorded, and the next one still runs
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${PYTHON:-python3}
REPORT=${OUT:-bench/gpu_report}
STAGES=",${GPU_CHECK_STAGES:-tests,bench,kernels,train},"
mkdir -p "$REPORT" && REPORT=$(cd "$REPORT" && pwd)
SUMMARY=$REPORT/summary.md
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
STARTED=$(date -u '+%Y-%m-%d %H:%M:%S UTC')
ROWS=()      # "| stage | status | seconds | note |" lines
FAILED=0
: > "$TMP/details.md"

write_summary() {
  {
    echo "# GPU check: $STARTED"
    echo
    echo "## Stages"
    echo
    echo "| stage | status | seconds | note |"
    echo "|---|---|---:|---|"
    printf '%s\n' ${ROWS[@]+"${ROWS[@]}"}
    echo
    cat "$TMP/details.md"
    echo "## Environment"
    echo
    echo '```'
    cat "$TMP/env.txt" 2>/dev/null
    echo '```'
  } > "$SUMMARY"
}

# record STAGE STATUS SECONDS NOTE: one row of the stage table (FAIL and TIMEOUT fail the run).
record() {
  local note=${4//|/\\|}
  ROWS+=("| $1 | $2 | $3 | ${note//$'\n'/ } |")
  [[ $2 == FAIL* || $2 == TIMEOUT ]] && FAILED=1
  echo "== $1: $2 ($3 s) $4" >&2
  write_summary
}

# detail TITLE FILE [LINES]: a fenced block in summary.md (the last LINES lines of FILE).
detail() {
  { echo "## $1"; echo; echo '```'; tail -n "${3:-40}" "$2"; echo '```'; echo; } \
    >> "$TMP/details.md"
}

want() { [[ $STAGES == *",$1,"* ]]; }

# with_limit SECONDS CMD...: the command under a time limit; SIGINT first, so that pytest still
# writes its report; exit status 124 when the limit was hit.
with_limit() {
  local limit=$1
  shift
  if command -v timeout >/dev/null; then
    timeout -s INT -k 15 "$limit" "$@"
  else
    "$@"
  fi
}

# ---- environment ------------------------------------------------------------------------------
{
  echo "started: $STARTED; host: $(uname -srm)"
  echo "commit: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "python: $(command -v "$PY") ($("$PY" --version 2>&1))"
  echo
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi 2>&1
  else
    echo "nvidia-smi: not found"
  fi
  echo
  "$PY" - <<'EOF' 2>&1
from importlib import metadata
for name in ("numpy", "cupy-cuda13x", "cupy-cuda12x", "cupy", "torch", "pytest", "hypothesis",
             "scikit-learn", "tqdm", "matplotlib", "scipy"):
    try:
        print(f"{name}: {metadata.version(name)}")
    except metadata.PackageNotFoundError:
        pass
try:
    import cupy
    rt = cupy.cuda.runtime
    print(f"CuPy: {rt.getDeviceCount()} device(s), CUDA runtime {rt.runtimeGetVersion()}, "
          f"driver API {rt.driverGetVersion()}")
except Exception as e:  # noqa: BLE001
    print(f"CuPy: no CUDA device ({type(e).__name__}: {e})")
try:
    import torch
    print(f"torch.cuda.is_available(): {torch.cuda.is_available()} (CUDA {torch.version.cuda})")
except Exception as e:  # noqa: BLE001
    print(f"torch: {type(e).__name__}: {e}")
import autograd_gpu as ag
print(f"autograd_gpu.cuda.is_available(): {ag.cuda.is_available()}")
EOF
  if command -v nvcc >/dev/null; then nvcc --version | tail -n 2; fi
} > "$TMP/env.txt" 2>&1
GPU_WHY=$("$PY" -c "import sys; sys.path.insert(0, 'bench'); import bench_gpu as b; print(b.gpu_status() or 'OK')" 2>&1 | tail -n 1)
AG_CUDA=$("$PY" -c "import autograd_gpu as ag; print(ag.cuda.is_available())" 2>&1 | tail -n 1)
if [[ $GPU_WHY == OK ]]; then
  record env PASS 0 "GPU present; autograd_gpu.cuda.is_available(): $AG_CUDA"
else
  record env PASS 0 "no CUDA GPU here ($GPU_WHY); CUDA stages skip or run on the CPU only"
fi

# ---- tests -----------------------------------------------------------------------------------
# NOTE: by default, -p no:benchmark (pytest-benchmark, on the GPU image, warns under xdist, and
# our filterwarnings = error makes that an internal error) and, where pytest-xdist is installed,
# workers (below): serially the suite outran 300 s on an H100 machine (2026-11-25).
if [[ -z ${PYTEST_ARGS+x} ]]; then
  PYTEST_ARGS="-p no:benchmark"
  # NOTE: one worker per core but two (16 cores: 14 workers): the whole suite took 149 s on an
  # H200 machine with 14 (2026-11-28), and has grown since.
  if "$PY" -c "import xdist" >/dev/null 2>&1; then
    cores=$(nproc 2>/dev/null || echo 8)
    PYTEST_ARGS+=" -n $(( cores > 4 ? cores - 2 : cores ))"
  fi
fi
if want tests; then
  t0=$SECONDS
  # NOTE: pyproject's addopts already has -q; a second -q would hide pytest's summary line.
  # shellcheck disable=SC2086
  with_limit "${TESTS_TIMEOUT:-300}" "$PY" -m pytest -p no:cacheprovider -rfE \
    --junitxml="$REPORT/junit.xml" ${PYTEST_ARGS:-} > "$REPORT/tests.log" 2>&1
  rc=$?
  secs=$((SECONDS - t0))
  last=$(grep -E '(passed|failed|error|skipped|no tests ran)' "$REPORT/tests.log" | tail -n 1)
  if [[ -s $REPORT/junit.xml ]]; then
    "$PY" bench/bench_gpu.py --junit-summary "$REPORT/junit.xml" > "$TMP/counts.txt" 2>&1
    counts=$(head -n 2 "$TMP/counts.txt" | tr '\n' ';')
    detail "Tests (from junit.xml)" "$TMP/counts.txt" 100
  else
    counts="no junit.xml"
  fi
  cuda_ran=$(grep -E '^cuda: ' "$TMP/counts.txt" 2>/dev/null | grep -oE '^cuda: [0-9]+' | grep -oE '[0-9]+$')
  if [[ $rc == 124 ]]; then
    record tests TIMEOUT "$secs" "killed after ${TESTS_TIMEOUT:-300} s; $counts"
  elif [[ $rc != 0 ]]; then
    record tests "FAIL (exit $rc)" "$secs" "$last; $counts"
  elif [[ $GPU_WHY == OK && ${cuda_ran:-0} == 0 ]]; then
    record tests "FAIL (no CUDA test passed)" "$secs" \
      "a GPU is present but no CUDA test passed (autograd_gpu.cuda.is_available(): $AG_CUDA); $counts"
  else
    record tests PASS "$secs" "$last; $counts"
  fi
  if [[ $rc != 0 ]]; then detail "tests.log (last lines)" "$REPORT/tests.log" 60; fi
  # NOTE: the device tool brings back files of at most 16 MiB.
  if [[ $(wc -c < "$REPORT/tests.log") -gt 15000000 ]]; then
    tail -c 15000000 "$REPORT/tests.log" > "$TMP/tests.log" && mv "$TMP/tests.log" "$REPORT/tests.log"
  fi
fi

# ---- benchmarks ------------------------------------------------------------------------------
if want bench; then
  t0=$SECONDS
  touch "$TMP/before_bench"
  # shellcheck disable=SC2086
  with_limit "${BENCH_TIMEOUT:-120}" "$PY" bench/bench_gpu.py --require-gpu --write \
    --report "$REPORT/bench_gpu.md" ${BENCH_ARGS:-} > "$REPORT/bench_gpu.jsonl" 2> "$REPORT/bench_gpu.log"
  rc=$?
  secs=$((SECONDS - t0))
  if [[ $rc == 77 ]]; then
    record bench SKIPPED "$secs" "$(tail -n 1 "$REPORT/bench_gpu.log")"
  else
    if [[ bench/RESULTS.md -nt $TMP/before_bench ]]; then
      cp bench/RESULTS.md "$REPORT/RESULTS.md"
    fi
    rows=$(wc -l < "$REPORT/bench_gpu.jsonl")
    case $rc in
      0) record bench PASS "$secs" "$rows measurements; report in bench_gpu.md, RESULTS.md refreshed" ;;
      124) record bench TIMEOUT "$secs" "killed after ${BENCH_TIMEOUT:-120} s; $rows measurements" ;;
      *) record bench "FAIL (exit $rc)" "$secs" "$rows measurements; see bench_gpu.log" ;;
    esac
    if [[ $rc != 0 ]]; then detail "bench_gpu.log (last lines)" "$REPORT/bench_gpu.log" 40; fi
  fi
fi

# ---- fused kernels (issues #15, #16, #18): norms, recurrent cells, attention, optimizers; memory plans (#19)
# NOTE: their JSON lines join bench_gpu.jsonl, their reports bench_gpu.md (8 files come back).
if want kernels; then
  # NOTE: bench_memory_budget (issue #19): auto_checkpoint's plans, offload included, on the GPU
  for script in bench_norm_gpu bench_rnn_gpu bench_attention_gpu bench_optim_gpu \
      bench_memory_budget; do
    t0=$SECONDS
    extra=()
    limit=${KERNELS_TIMEOUT:-40}
    if [[ $script == bench_memory_budget ]]; then
      extra=(--device cuda --repeats 2)
      limit=${MEMORY_TIMEOUT:-60}
    fi
    with_limit "$limit" "$PY" "bench/$script.py" --quick --require-gpu \
      ${extra[@]+"${extra[@]}"} >> "$REPORT/bench_gpu.jsonl" 2> "$TMP/$script.log"
    rc=$?
    secs=$((SECONDS - t0))
    { echo; echo "## $script (--quick)"; echo; cat "$TMP/$script.log"; } >> "$REPORT/bench_gpu.md"
    case $rc in
      0) record "$script" PASS "$secs" "report in bench_gpu.md" ;;
      77) record "$script" SKIPPED "$secs" "$(tail -n 1 "$TMP/$script.log")" ;;
      124) record "$script" TIMEOUT "$secs" "killed after $limit s" ;;
      *) record "$script" "FAIL (exit $rc)" "$secs" "$(tail -n 1 "$TMP/$script.log")"
         detail "$script (last lines)" "$TMP/$script.log" 30 ;;
    esac
  done
  # NOTE: issue #20: compile's steps as one CUDA graph against PyTorch eager and PyTorch's own
  # whole-step CUDA graph (its CPU rows too; torch.compile backends left out: time)
  t0=$SECONDS
  limit=${COMPILE_TIMEOUT:-90}
  with_limit "$limit" "$PY" bench/bench_compile.py --quick --cases small_adam,mlp_sgd \
    --torch-backends none >> "$REPORT/bench_gpu.jsonl" 2> "$TMP/bench_compile.log"
  rc=$?
  secs=$((SECONDS - t0))
  { echo; echo "## bench_compile (--quick)"; echo; cat "$TMP/bench_compile.log"; } >> "$REPORT/bench_gpu.md"
  case $rc in
    0) record bench_compile PASS "$secs" "report in bench_gpu.md" ;;
    124) record bench_compile TIMEOUT "$secs" "killed after $limit s" ;;
    *) record bench_compile "FAIL (exit $rc)" "$secs" "$(tail -n 1 "$TMP/bench_compile.log")"
       detail "bench_compile (last lines)" "$TMP/bench_compile.log" 30 ;;
  esac
fi

# ---- training --------------------------------------------------------------------------------
if want train; then
  t0=$SECONDS
  missing=$("$PY" -c "import importlib.util as u; print(' '.join(m for m in ('tqdm', 'matplotlib') if u.find_spec(m) is None))" 2>&1)
  if [[ $GPU_WHY != OK ]]; then
    record train SKIPPED 0 "no CUDA GPU here ($GPU_WHY)"
  elif [[ -n $missing ]]; then
    record train SKIPPED 0 "the train command needs tqdm and matplotlib (the examples extra); missing: $missing"
  else
    data_args=()
    note=""
    if ! "$PY" -c "import sklearn.datasets" >/dev/null 2>&1; then
      # NOTE: the digits ship with scikit-learn; without it, a stand-in of the same shape:
      # 1797 8x8 images of 10 noisy class templates.
      "$PY" - "$TMP/digits_like.npz" <<'EOF'
import sys

import numpy as np

rng = np.random.default_rng(0)
y = np.arange(1797) % 10
templates = rng.uniform(0, 16, (10, 8, 8))
x = np.clip(templates[y] + rng.normal(0, 3, (1797, 8, 8)), 0, 16).astype(np.float32)
np.savez(sys.argv[1], x=x.reshape(1797, 64), y=y)
EOF
      data_args=(--data "$TMP/digits_like.npz")
      note="scikit-learn missing: trained on a synthetic 10-class 8x8 stand-in; "
    fi
    # NOTE: `python -m autograd_gpu` (the package's __main__), not `-m autograd_gpu.cli`, which
    # has no __main__ guard and would exit 0 without training.
    with_limit "${TRAIN_TIMEOUT:-50}" "$PY" -m autograd_gpu train --device cuda --epochs 5 \
      --quiet --out "$TMP/train_run" ${data_args[@]+"${data_args[@]}"} > "$REPORT/train.log" 2>&1
    rc=$?
    secs=$((SECONDS - t0))
    last=$(tail -n 1 "$REPORT/train.log")
    if [[ $rc == 124 ]]; then
      record train TIMEOUT "$secs" "${note}killed after ${TRAIN_TIMEOUT:-50} s"
    elif [[ $rc == 0 && $last == "test accuracy: "* ]]; then
      record train PASS "$secs" "${note}5 epochs on cuda, $last"
    else
      record train "FAIL (exit $rc)" "$secs" "${note}$last"
      detail "train.log (last lines)" "$REPORT/train.log" 30
    fi
  fi
fi

write_summary
cat "$SUMMARY"
exit "$FAILED"
