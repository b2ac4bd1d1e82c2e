"""``autograd-gpu run``: run an unmodified PyTorch program on autograd_gpu.

    autograd-gpu run script.py [args ...]
    autograd-gpu run -m package.module [args ...]
    python -m autograd_gpu.run script.py [args ...]     (the same, without the console script)

installs the ``torch`` import hook (``autograd_gpu.compat``) for this process and runs the
program as ``python script.py`` / ``python -m package.module`` would: ``sys.argv`` is
``[script, args...]``, the code runs as ``__main__`` with ``__file__`` set, ``sys.path[0]`` is
the script's folder (the current folder for ``-m``), ``sys.exit(n)`` exits with ``n``, and an
uncaught exception prints Python's traceback (without the runner's frames) and exits with 1
(``KeyboardInterrupt``: by SIGINT, as Python). If the real PyTorch is already imported in the
process, it refuses.
"""

from __future__ import annotations

import argparse
import builtins
import importlib.machinery
import importlib.util
import io
import os
import runpy
import sys
import types
import zipfile
from typing import Any, Callable

_DESCRIPTION = ("Run an unmodified PyTorch program with `import torch` and every `torch.*` "
                "module resolving to autograd_gpu, for this process only, as `python script.py "
                "[args]` or `python -m module [args]` would run it.")
_USAGE = "%(prog)s [-h] (script.py | -m module) [args ...]"


def configure(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Give ``parser`` the runner's arguments (shared by ``autograd-gpu run`` and
    ``python -m autograd_gpu.run``).

    NOTE: both arguments take the rest of the command line (``REMAINDER``), so the program's
    own options (``-h``, ``--epochs 3``) reach it untouched.
    """
    parser.usage = _USAGE
    parser.description = _DESCRIPTION
    parser.add_argument("-m", dest="module", nargs=argparse.REMAINDER, metavar="module",
                        help="run library module MODULE as a script, as python -m does; "
                             "the arguments after it go to the module")
    parser.add_argument("script", nargs=argparse.REMAINDER, metavar="script.py [args ...]",
                        help="the program to run (a .py file, or a folder or zip archive with "
                             "a __main__.py) and its arguments")
    return parser


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """The ``run`` subcommand of ``autograd-gpu`` (``cli.py``)."""
    return configure(sub.add_parser(
        "run", help="run an unmodified PyTorch script (import torch) on autograd_gpu"))


def from_args(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Run what a ``configure``-d parser parsed."""
    rest = list(args.script)
    if args.module is not None:
        if not args.module:
            parser.error("argument -m: expected a module name")
        return run_module(args.module[0], args.module[1:] + rest, parser.prog)
    if rest[:1] == ["--"]:
        rest = rest[1:]
    if not rest:
        parser.error("give a script to run, or -m MODULE")
    return run_path(rest[0], rest[1:], parser.prog)


def _refused(prog: str) -> bool:
    """Install the hook; True, after printing why, when it is refused (the real PyTorch is
    loaded)."""
    from . import compat

    try:
        compat.install()
    except RuntimeError as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return True
    return False


def run_path(path: str, args: list[str], prog: str = "autograd-gpu run") -> int:
    """Run the file, folder or zip archive at ``path`` as ``python path args...`` would, with
    the ``torch`` hook installed. Returns 0, 1 (refused: real torch loaded) or 2 (no such file);
    ``sys.exit`` and uncaught exceptions of the program propagate (see ``_keep_traceback``)."""
    full = os.path.abspath(path)
    archive = os.path.isdir(full) or (os.path.isfile(full) and zipfile.is_zipfile(full))
    try:
        source = b""
        if not archive:
            with io.open_code(full) as f:
                source = f.read()
    except OSError as e:
        print(f"{prog}: can't open file {full!r}: [Errno {e.errno}] {e.strerror}",
              file=sys.stderr)
        return 2
    if _refused(prog):
        return 1
    if archive:
        return _run(lambda: _exec_archive(path), [path, *args], None)
    # NOTE: Python puts the script's folder, symbolic links resolved, first on sys.path.
    folder = os.path.dirname(os.path.realpath(full))
    return _run(lambda: _exec_source(source, full), [path, *args], folder)


def run_module(name: str, args: list[str], prog: str = "autograd-gpu run") -> int:
    """Run module ``name`` as ``python -m name args...`` would, with the ``torch`` hook
    installed. Returns 0, or 1 when it is refused or there is no such module."""
    if _refused(prog):
        return 1
    return _run(lambda: _exec_module(name, prog), [name, *args], os.getcwd())


def _run(execute: Callable[[], int], argv: list[str], path0: str | None) -> int:
    """``execute()`` with ``sys.argv = argv`` and ``sys.path[0] = path0`` (None: leave it),
    both restored afterwards."""
    saved_argv, saved_path = sys.argv, list(sys.path)
    sys.argv = argv
    if path0 is not None:
        sys.path[0:1] = [path0]
    try:
        return execute()
    except SystemExit:
        raise
    except BaseException as e:
        _keep_traceback(e)
        raise
    finally:
        sys.argv = saved_argv
        sys.path[:] = saved_path


def _exec_source(source: bytes, filename: str) -> int:
    """Run ``source`` as the ``__main__`` module of file ``filename`` (absolute, as Python's
    ``__file__`` and tracebacks show it).

    NOTE: not ``runpy.run_path``: it would set ``__file__`` to the path as typed, or, given the
    absolute path, change ``sys.argv[0]``; ``python script.py`` keeps ``argv[0]`` as typed and
    makes ``__file__`` absolute. ``dont_inherit``: this file's ``from __future__`` imports must
    not reach the program.
    """
    main = types.ModuleType("__main__")
    main.__file__ = filename
    main.__loader__ = importlib.machinery.SourceFileLoader("__main__", filename)
    main.__builtins__ = builtins  # type: ignore[attr-defined]
    main.__spec__ = None
    main.__package__ = None
    saved = sys.modules.get("__main__")
    sys.modules["__main__"] = main
    try:
        exec(compile(source, filename, "exec", dont_inherit=True), main.__dict__)  # noqa: S102
    finally:
        if saved is not None:
            sys.modules["__main__"] = saved
    return 0


def _exec_archive(path: str) -> int:
    """Run a folder's or a zip archive's ``__main__.py`` (runpy puts ``path`` first on
    ``sys.path``, as Python does)."""
    del sys.path[0]
    runpy.run_path(path, run_name="__main__")
    return 0


def _exec_module(name: str, prog: str) -> int:
    """Run module ``name`` as ``__main__`` (``sys.argv[0]`` becomes its file, as with
    ``python -m``); 1, with Python's message, when there is no such module."""
    try:
        spec = importlib.util.find_spec(name)
    except ModuleNotFoundError:  # a parent package is missing
        spec = None
    if spec is None:
        print(f"{prog}: No module named {name}", file=sys.stderr)
        return 1
    if (spec.submodule_search_locations is not None
            and importlib.util.find_spec(name + ".__main__") is None):
        print(f"{prog}: No module named {name}.__main__; '{name}' is a package and cannot be "
              "directly executed", file=sys.stderr)
        return 1
    runpy.run_module(name, run_name="__main__", alter_sys=True)
    return 0


_RUNNER_CODES = (_exec_source.__code__, _exec_archive.__code__, _exec_module.__code__)


def _program_traceback(tb: types.TracebackType | None) -> types.TracebackType | None:
    """``tb`` from the program's first frame on: without the frames of the console script,
    this module and runpy above it (None for a syntax error in the program itself, for which
    Python prints no "Traceback" lines either). ``tb`` itself when it never went through the
    runner."""
    entry = tb
    while entry is not None and entry.tb_frame.f_code not in _RUNNER_CODES:
        entry = entry.tb_next
    if entry is None:
        return tb
    start = entry.tb_next
    while start is not None and start.tb_frame.f_globals.get("__name__") == "runpy":
        start = start.tb_next
    return start


def _keep_traceback(exc: BaseException) -> None:
    """Let the program's uncaught ``exc`` reach the interpreter as Python would report it.

    NOTE: the exception is re-raised, so Python itself prints it through ``sys.excepthook``
    and exits as for any script (status 1; ``KeyboardInterrupt``: killed by SIGINT, 130 in a
    shell). The hook in place now (the program may have set its own) is wrapped once to see
    the traceback from the program's first frame, without the runner's frames above it.
    """
    hook = sys.excepthook

    def excepthook(kind: type[BaseException], value: BaseException,
                   tb: types.TracebackType | None) -> None:
        sys.excepthook = hook
        if value is exc:
            tb = _program_traceback(tb)
            value.__traceback__ = tb
        hook(kind, value, tb)

    sys.excepthook = excepthook


def main(argv: list[str] | None = None) -> int:
    """``python -m autograd_gpu.run [-h] (script.py | -m module) [args ...]``."""
    parser = configure(argparse.ArgumentParser(prog="python -m autograd_gpu.run"))
    return from_args(parser.parse_args(argv), parser)


if __name__ == "__main__":
    raise SystemExit(main())
