"""``autograd-gpu run`` and the ``torch`` import hook (``autograd_gpu.compat``): every import form
resolves to our modules with identities kept, the program runs as ``python script.py`` would
(argv, ``__main__``, ``__file__``, ``sys.path[0]``, exit codes, tracebacks, ``-m``), the runner
refuses when the real PyTorch is loaded, missing submodules say so, the ``torch.jit``/``hub``/
``onnx`` stand-ins import and fail only when a missing function is called, and a plain PyTorch
training loop prints the oracle's losses. Programs run in subprocesses: the hook is
process-wide."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import autograd_gpu as ag
from autograd_gpu import compat

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "autograd_gpu", "run"]      # what `autograd-gpu run` calls
MODULE = [sys.executable, "-m", "autograd_gpu.run"]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AUTOGRAD_GPU_FAKE")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["OMP_NUM_THREADS"] = "1"
    return env


def _write(path: Path, source: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source))
    return path


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, cwd=cwd, env=_env(), timeout=120)


def _json_line(stdout: str) -> dict:
    return json.loads(stdout.strip().splitlines()[-1])


IMPORTS = """
    import importlib, importlib.util, json, sys
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    nn_ = nn
    from torch import nn, optim
    from torch.utils.data import DataLoader, TensorDataset
    import torch.utils.data
    from torch.nn.modules.loss import MSELoss
    import autograd_gpu

    def missing(name):
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as e:
            return [type(e).__name__, str(e), e.name]
        return "imported"

    backends = importlib.import_module("torch.backends")
    try:
        import torch.backends.cudnn as cudnn  # the long-tail item's flag module, when merged
        cudnn_ok = cudnn is autograd_gpu.backends.cudnn
    except ModuleNotFoundError as e:
        cudnn_ok = str(e) == "autograd_gpu does not provide torch.backends.cudnn"
    print(json.dumps({
        "torch": torch is autograd_gpu,
        "nn": nn is autograd_gpu.nn and nn_ is nn and torch.nn is nn,
        "F": F is autograd_gpu.nn.functional and sys.modules["torch.nn.functional"] is F,
        "optim": optim is autograd_gpu.optim,
        "import_module": importlib.import_module("torch.optim") is autograd_gpu.optim,
        "data": DataLoader is autograd_gpu.utils.data.DataLoader
                and torch.utils.data is autograd_gpu.utils.data
                and TensorDataset is autograd_gpu.utils.data.TensorDataset,
        "nn.modules": MSELoss is nn.MSELoss,
        "backends": backends is autograd_gpu.backends and cudnn_ok,
        "spec": [torch.__spec__.name, nn.__spec__.name, torch.__name__],
        "distributed": missing("torch.distributed"),
        "deep": missing("torch.distributed.fsdp"),
        "not_a_module": missing("torch.device"),
        "device_kept": isinstance(torch.device, type),  # the class, not replaced by a module
        "nn_utils": missing("torch.nn.modules.utils"),
        "find_spec": importlib.util.find_spec("torch") is not None,
    }))
    import torch.distributed
"""


def test_every_import_form_gives_our_modules(tmp_path: Path) -> None:
    script = _write(tmp_path / "imports.py", IMPORTS)
    proc = _run([*CLI, str(script)], tmp_path)
    out = _json_line(proc.stdout)
    for key in ("torch", "nn", "F", "optim", "import_module", "data", "nn.modules", "backends",
                "device_kept", "find_spec"):
        assert out[key] is True, key
    # The modules keep their own names and specs: `torch` is an alias in sys.modules only.
    assert out["spec"] == ["autograd_gpu", "autograd_gpu.nn", "autograd_gpu"]
    for key, name in (("distributed", "torch.distributed"), ("deep", "torch.distributed"),
                      ("not_a_module", "torch.device"), ("nn_utils", "torch.nn.modules.utils")):
        assert out[key] == ["ModuleNotFoundError", f"autograd_gpu does not provide {name}",
                            name], key
    # Uncaught, the missing submodule ends the program with Python's report and status.
    assert proc.returncode == 1
    assert proc.stderr.startswith("Traceback (most recent call last):\n"
                                  f'  File "{script}", line ')
    assert proc.stderr.endswith(
        "\nModuleNotFoundError: autograd_gpu does not provide torch.distributed\n")


ARGV = """
    import json, sys
    print(json.dumps({"argv": sys.argv, "file": __file__, "name": __name__,
                      "path0": sys.path[0], "spec": repr(__spec__), "package": __package__,
                      "main": sys.modules["__main__"].__dict__ is globals(),
                      "annotations": "annotations" in globals()}))
    sys.exit(int(sys.argv[1]))
"""


def test_program_sees_what_python_gives_it(tmp_path: Path) -> None:
    """Same argv, ``__file__``, ``__name__``, ``sys.path[0]`` and exit status as ``python``;
    the program's own options (``-h``, ``--epochs``) reach it."""
    _write(tmp_path / "sub" / "prog.py", ARGV)
    args = ["sub/prog.py", "3", "-h", "--epochs", "2"]
    ours = _run([*CLI, *args], tmp_path)
    python = _run([sys.executable, *args], tmp_path)
    assert ours.returncode == python.returncode == 3, ours.stderr
    assert _json_line(ours.stdout) == _json_line(python.stdout)
    assert _json_line(ours.stdout)["path0"] == str((tmp_path / "sub").resolve())


def test_module_mode_and_a_folder(tmp_path: Path) -> None:
    _write(tmp_path / "pkg" / "__init__.py", "")
    _write(tmp_path / "pkg" / "tool.py", """
        import json, sys, torch
        print(json.dumps({"argv": sys.argv, "name": __name__, "path0": sys.path[0],
                          "torch": torch.__name__}))
    """)
    proc = _run([*CLI, "-m", "pkg.tool", "-x", "--y"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert _json_line(proc.stdout) == {
        "argv": [str(tmp_path / "pkg" / "tool.py"), "-x", "--y"], "name": "__main__",
        "path0": str(tmp_path), "torch": "autograd_gpu"}
    missing = _run([*MODULE, "-m", "no_such_pkg.tool"], tmp_path)
    assert missing.returncode == 1
    assert missing.stderr == "python -m autograd_gpu.run: No module named no_such_pkg.tool\n"
    _write(tmp_path / "app" / "__main__.py", "import sys, torch\nprint(sys.argv, torch.__name__)\n")
    proc = _run([*MODULE, "app", "a"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "['app', 'a'] autograd_gpu"


def test_usage_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                      capsys: pytest.CaptureFixture[str]) -> None:
    """Checked before the hook is installed (so here, in a process with the real torch)."""
    from autograd_gpu import cli

    monkeypatch.chdir(tmp_path)
    assert cli.main(["run", "nope.py"]) == 2
    assert capsys.readouterr().err == (f"autograd-gpu run: can't open file "
                                       f"'{tmp_path / 'nope.py'}': [Errno 2] No such file or "
                                       "directory\n")
    for argv, message in ((["run"], "give a script to run, or -m MODULE"),
                          (["run", "-m"], "argument -m: expected a module name")):
        with pytest.raises(SystemExit) as exit_:
            cli.main(argv)
        assert exit_.value.code == 2
        assert capsys.readouterr().err.endswith(f"autograd-gpu run: error: {message}\n")
    assert not compat.is_installed()


CRASH = """
    import sys
    def inner():
        raise ValueError("boom")
    try:
        inner()
    except ValueError as e:
        raise RuntimeError("outer") from e
"""
INTERRUPT = """
    try:
        raise KeyboardInterrupt
    finally:
        print("cleanup ran")
"""
HOOK = """
    import sys
    def hook(kind, value, tb):
        n = 0
        while tb is not None:
            n, tb = n + 1, tb.tb_next
        print(f"custom hook: {kind.__name__} with {n} frames", file=sys.stderr)
    sys.excepthook = hook
    def f():
        1 / 0
    f()
"""


@pytest.mark.parametrize("source, status", [
    (CRASH, 1), (INTERRUPT, -signal.SIGINT), ("def (\n", 1), (HOOK, 1)],
    ids=["traceback", "keyboard-interrupt", "syntax-error", "own-excepthook"])
def test_failures_are_reported_as_python_does(source: str, status: int, tmp_path: Path) -> None:
    """Same stderr (the traceback from the program's first frame, chained causes included),
    stdout and status as ``python script.py``."""
    _write(tmp_path / "prog.py", source)
    ours = _run([*CLI, "prog.py"], tmp_path)
    python = _run([sys.executable, "prog.py"], tmp_path)
    assert (ours.returncode, ours.stdout, ours.stderr) == (
        python.returncode, python.stdout, python.stderr)
    assert python.returncode == status


def test_refuses_when_real_torch_is_loaded(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """This process has the real torch (the suite's oracle): the runner and ``install`` refuse
    and change nothing."""
    import torch

    from autograd_gpu import run

    script = _write(tmp_path / "prog.py", "print('ran')\n")
    before = list(sys.meta_path)
    assert run.main([str(script)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("python -m autograd_gpu.run: the real PyTorch is already imported in "
                          f"this process (torch from {torch.__file__}), so `torch` can no longer "
                          "be made to mean autograd_gpu.")
    with pytest.raises(RuntimeError, match=r"^the real PyTorch is already imported"):
        compat.install()
    assert sys.meta_path == before and not compat.is_installed()
    compat.uninstall()  # nothing installed: nothing to do, the real torch stays
    assert sys.modules["torch"] is torch


def test_install_and_uninstall_in_a_notebook_like_process(tmp_path: Path) -> None:
    check = _write(tmp_path / "nb.py", """
        import sys
        import autograd_gpu, autograd_gpu.compat as compat
        compat.install(); compat.install()
        finders = sum(isinstance(f, compat.TorchFinder) for f in sys.meta_path)
        import torch, torch.nn.functional as F
        ours = torch is autograd_gpu and F is autograd_gpu.nn.functional
        compat.uninstall(); compat.uninstall()
        left = sorted(n for n in sys.modules if n == "torch" or n.startswith("torch."))
        sys.modules["torch"] = None   # block the real one: importing it must not find ours
        try:
            import torch
            blocked = False
        except ImportError:
            blocked = True
        print(finders, ours, left, compat.is_installed(), blocked, autograd_gpu.__spec__.name)
    """)
    proc = subprocess.run([sys.executable, str(check)], capture_output=True, text=True,
                          cwd=tmp_path, env=_env(), timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "1 True [] False True autograd_gpu"


STUBS = """
    import json
    import torch
    import torch.jit, torch.onnx, torch.hub, torch.nn.parallel
    from torch.nn.parallel import DataParallel

    def raises(fn, *args):
        try:
            fn(*args)
        except NotImplementedError as e:
            return str(e)
        return "returned"

    m = torch.nn.Linear(2, 2)
    def f(x):
        return x * 2
    print(json.dumps({
        "script": torch.jit.script(m) is m and torch.jit.script(f) is f,
        "trace": torch.jit.trace(f, torch.ones(2)) is f and torch.jit.trace(m, torch.ones(1, 2)) is m,
        "decorators": torch.jit.ignore(f) is f and torch.jit.ignore(drop=True)(f) is f
                      and torch.jit.unused(f) is f and torch.jit.export(f) is f,
        "flags": [torch.jit.is_scripting(), torch.jit.is_tracing(), torch.onnx.is_in_onnx_export()],
        "annotate": torch.jit.annotate(list, [1]),
        "freeze": torch.jit.freeze(m.eval()) is m,
        "parallel": DataParallel is torch.nn.DataParallel,
        "hub_dir": torch.hub.get_dir(),
        "jit.save": raises(torch.jit.save, m, "m.pt"),
        "hub.load": raises(torch.hub.load, "pytorch/vision", "resnet18"),
        "onnx.export": raises(torch.onnx.export, m, (torch.ones(1, 2),), "m.onnx"),
    }))
"""


def test_stand_in_modules_import_and_fail_only_when_called(tmp_path: Path) -> None:
    script = _write(tmp_path / "stubs.py", STUBS)
    env_home = tmp_path / "home"
    proc = subprocess.run([*CLI, str(script)], capture_output=True, text=True, cwd=tmp_path,
                          env={**_env(), "TORCH_HOME": str(env_home)}, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = _json_line(proc.stdout)
    for key in ("script", "trace", "decorators", "freeze", "parallel"):
        assert out[key] is True, key
    assert out["flags"] == [False, False, False] and out["annotate"] == [1]
    assert out["hub_dir"] == str(env_home / "hub")
    for key in ("jit.save", "hub.load", "onnx.export"):
        assert out[key].startswith(f"autograd_gpu does not implement torch.{key}: "), key


def test_jit_and_hub_match_the_oracle(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import typing
    import warnings

    import torch

    def outcome(fn: typing.Callable[..., bool], *args: typing.Any) -> object:
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                result = fn(*args)
        except Exception as e:  # noqa: BLE001
            return type(e), str(e)
        return result, [str(w.message) for w in caught]

    for obj, kind in [([1, 2], typing.List[int]), ([1, "a"], typing.List[int]),
                      ({"a": [1]}, typing.Dict[str, typing.List[int]]),
                      ((1, "a"), typing.Tuple[int, str]), ((1, 2, 3), typing.Tuple[int, ...]),
                      (None, typing.Optional[int]), ("a", int | None), (3, float),  # noqa: UP045
                      (3, (str, int)), ([], list[str]), ({}, typing.Dict[str, int]), ([1], list),
                      ({}, dict), (1, typing.Optional), (1, [int]), (1, typing.Any)]:
        assert outcome(ag.jit.isinstance, obj, kind) == outcome(torch.jit.isinstance, obj, kind)
    assert ag.jit.Attribute(1, int) == torch.jit.Attribute(1, int)
    assert ag.jit.Attribute(1, int)._fields == torch.jit.Attribute(1, int)._fields
    with pytest.warns(DeprecationWarning, match=r"^`torch\.jit\.script` is deprecated\. Please "
                                                r"switch to `torch\.compile` or `torch\.export`\.$"):
        ag.jit.script(len)
    m = ag.nn.Linear(1, 1)
    with pytest.warns(DeprecationWarning, match="torch.jit.freeze"), \
            pytest.raises(RuntimeError, match="^Freezing is currently only implemented for "
                                              "modules in eval mode"):
        ag.jit.freeze(m)
    with pytest.raises(RuntimeError, match="^Argument to @torch.jit.ignore must be a bool"):
        ag.jit.ignore(3)
    assert ag.jit.onednn_fusion_enabled() == torch.jit.onednn_fusion_enabled()
    with pytest.raises(Exception, match=r"^unrecognized fuser option \(name: fuser9\)$"):
        with ag.jit.fuser("fuser9"):
            pass
    for ours, theirs in ((ag.onnx.TrainingMode, torch.onnx.TrainingMode),
                         (ag.onnx.OperatorExportTypes, torch.onnx.OperatorExportTypes)):
        assert {k: int(v) for k, v in ours.__members__.items()} == \
            {k: int(v) for k, v in theirs.__members__.items()}
    assert issubclass(ag.onnx.OnnxExporterError, RuntimeError)
    for env in ({}, {"TORCH_HOME": str(tmp_path / "th")}, {"XDG_CACHE_HOME": str(tmp_path)}):
        monkeypatch.delenv("TORCH_HOME", raising=False)
        monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        assert ag.hub.get_dir() == torch.hub.get_dir()


TRAIN = """
    import torch
    import torch.nn as nn
    from torch.utils.data import DataLoader, TensorDataset

    x = torch.linspace(-1.0, 1.0, 64).reshape(32, 2)
    y = x @ torch.tensor([[2.0], [-3.0]]) + 0.5 + 0.1 * torch.sin(7 * x[:, :1])
    model = nn.Linear(2, 1)
    with torch.no_grad():   # fixed start: the two libraries' random streams differ
        model.weight.copy_(torch.tensor([[0.1, -0.2]]))
        model.bias.fill_(0.05)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.5)
    loss_fn = nn.MSELoss()
    loader = DataLoader(TensorDataset(x, y), batch_size=16, shuffle=False)
    step = 0
    while step < 20:
        for xb, yb in loader:
            opt.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            opt.step()
            print(f"step {step} loss {loss.item():.8f}")
            step += 1
    print("weight", " ".join(f"{v:.8f}" for v in model.weight.detach().flatten().tolist()))
"""


def test_a_plain_pytorch_training_loop_gives_the_oracles_losses(tmp_path: Path) -> None:
    script = _write(tmp_path / "train.py", TRAIN)
    ours = _run([*CLI, str(script)], tmp_path)
    real = _run([sys.executable, str(script)], tmp_path)
    assert ours.returncode == 0, ours.stderr
    assert real.returncode == 0, real.stderr
    lines, oracle = ours.stdout.splitlines(), real.stdout.splitlines()
    assert len(lines) == len(oracle) == 21
    for a, b in zip(lines, oracle):
        labels_a, numbers_a = _labels_and_numbers(a)
        labels_b, numbers_b = _labels_and_numbers(b)
        assert labels_a == labels_b   # "step N loss X" / "weight X Y"
        assert numbers_a == pytest.approx(numbers_b, rel=1e-5, abs=1e-7), (a, b)


def _labels_and_numbers(line: str) -> tuple[list[str], list[float]]:
    """The words and the numbers of one printed line, apart."""
    words = line.split()
    numbers = [w for w in words if w.lstrip("-").replace(".", "", 1).isdigit()]
    return [w for w in words if w not in numbers], [float(w) for w in numbers]


COMPILED = """
    import torch
    import torch._dynamo

    torch.manual_seed(0)
    torch._dynamo.config.cache_size_limit = 16
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x, y = torch.randn(16, 4), torch.randint(0, 2, (16,))

    @torch.compile(backend="eager")
    def step(x, y):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    for i in range(5):
        print(f"step {i} loss {step(x, y).item():.6f}")
    print("explain", torch._dynamo.explain(lambda t: t * 2)(x).graph_break_count)

    net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
    cnet = torch.compile(net, backend="aot_eager")
    opt2 = torch.optim.Adam(net.parameters(), lr=0.01)
    for i in range(5):
        opt2.zero_grad()
        loss = torch.nn.functional.cross_entropy(cnet(x), y)
        loss.backward()
        opt2.step()
        print(f"module step {i} loss {loss.item():.6f}")
    print("node", cnet(x).grad_fn.name())
"""


def test_a_torch_compile_program_prints_the_oracles_numbers(tmp_path: Path) -> None:
    """``torch.compile`` and ``torch._dynamo`` under the runner: ours replays the step, the
    oracle traces it with dynamo (backend "eager": no C++ compiler needed); a compiled module
    trained in an eager loop (backend "aot_eager"): forward and backward replayed behind one
    node of PyTorch's name; the printed losses agree to the last digit shown."""
    script = _write(tmp_path / "compiled.py", COMPILED)
    ours = _run([*CLI, str(script)], tmp_path)
    assert ours.returncode == 0, ours.stderr
    real = _run([sys.executable, str(script)], tmp_path)
    assert real.returncode == 0, real.stderr
    assert ours.stdout.splitlines() == real.stdout.splitlines()
