"""CUDA C source to a host shared library: translation, g++, and the on-disk cache.

The kernel source is compiled as C++17 after ``prelude.h`` (pasted in, so the cache key covers
it); the two inline PTX conversions of ``kernels/common.cuh`` become host functions, any other
inline PTX is refused. Each name expression gets an ``extern "C"`` pair, ``emu_signature_<k>``
and ``emu_launch_<k>``. Libraries are cached by a hash of everything that goes into them, under
``$AUTOGRAD_GPU_EMULATOR_CACHE``, else ``$XDG_CACHE_HOME/autograd_gpu/kernel_emulator`` (default
``~/.cache``), else the temp folder: never inside the repository.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

PRELUDE = Path(__file__).with_name("prelude.h")
FLAGS = ("-std=c++17", "-O1", "-fPIC", "-shared", "-fvisibility=hidden", "-w",
         "-U_FORTIFY_SOURCE", "-D_FORTIFY_SOURCE=0")  # see prelude.h on _longjmp

# Inline PTX the kernels use, as host functions of prelude.h.
_PTX = {"cvt.f32.f16": "emu_half_to_float", "cvt.rn.f16.f32": "emu_float_to_half"}
_ASM = re.compile(r'\basm\s*(?:volatile\s*)?\(\s*"(?P<code>[^"]*)"\s*:\s*"=\w+"\s*\(\s*(?P<out>\w+)'
                  r'\s*\)\s*:\s*"\w+"\s*\(\s*(?P<src>\w+)\s*\)\s*\)\s*;')


class CompileError(RuntimeError):
    """g++ refused the translated source, or it holds CUDA the emulator does not know."""


def compiler() -> str | None:
    """The path of g++, or None when it is not installed."""
    return shutil.which("g++")


def _host_ptx(match: re.Match[str]) -> str:
    code = match.group("code").split()
    if len(code) != 3 or code[0] not in _PTX or code[1:] != ["%0,", "%1;"]:
        raise CompileError(f"inline PTX the kernel emulator does not know: {match.group(0)!r}; "
                           f"known: {sorted(_PTX)} (add a host version to prelude.h)")
    return f"{match.group('out')} = {_PTX[code[0]]}({match.group('src')});"


def translate(code: str, name_expressions: list[str]) -> str:
    """The C++ text g++ compiles: prelude, kernel source (PTX replaced), one signature and one
    launch function per name expression."""
    body = _ASM.sub(_host_ptx, code)
    left = re.search(r"\basm\s*(?:volatile\s*)?\(.*", body)
    if left:
        raise CompileError(f"inline PTX the kernel emulator cannot translate: {left.group(0)!r}")
    parts = ['#line 1 "kernel_emulator/prelude.h"', PRELUDE.read_text(),
             '#line 1 "kernel source"', body, "#line 1 \"emulator entry points\""]
    export = 'extern "C" __attribute__((visibility("default")))'
    for k, expr in enumerate(name_expressions):
        parts.append(f"{export} const char* emu_signature_{k}() "
                     f"{{ return emu_signature(&{expr}); }}")
        parts.append(f"{export} const char* emu_launch_{k}(const unsigned* dims, "
                     "unsigned char* packed, const unsigned long long* extents, int count) "
                     f"{{ return emu_launch(&{expr}, dims, packed, extents, count); }}")
    return "\n".join(parts) + "\n"


def cache_dir() -> Path:
    """Where compiled libraries are kept (created on demand; see the module docstring)."""
    explicit = os.environ.get("AUTOGRAD_GPU_EMULATOR_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "autograd_gpu" / "kernel_emulator"


def _writable(folder: Path) -> Path:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if os.access(folder, os.W_OK):
            return folder
    except OSError:
        pass
    fallback = Path(tempfile.gettempdir()) / f"autograd_gpu-kernel_emulator-{os.getuid()}"
    fallback.mkdir(parents=True, exist_ok=True)
    return fallback


_versions: dict[str, str] = {}


def _version(cxx: str) -> str:
    if cxx not in _versions:
        out = subprocess.run([cxx, "--version"], capture_output=True, text=True, check=False)
        _versions[cxx] = out.stdout.splitlines()[0] if out.stdout else "unknown"
    return _versions[cxx]


def library(source: str, defines: tuple[str, ...] = ()) -> Path:
    """The shared library built from ``source`` (translated C++): from the cache, or compiled
    now and cached.

    Raises:
        CompileError: g++ is missing or failed (its messages are in the error).
    """
    cxx = compiler()
    if cxx is None:
        raise CompileError("the kernel emulator needs g++, which is not installed")
    command = [*FLAGS, *defines]
    key = hashlib.sha256("\0".join([_version(cxx), *command, source]).encode()).hexdigest()[:24]
    folder = _writable(cache_dir())
    lib = folder / f"{key}.so"
    if lib.exists():
        try:
            os.utime(lib)  # marks it used, for _prune
        except OSError:
            pass
        return lib
    fd, tmp = tempfile.mkstemp(prefix=f"{key}-", suffix=".cpp", dir=folder)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(source)
        out = subprocess.run([cxx, *command, "-o", tmp + ".so", tmp], capture_output=True,
                             text=True, check=False)
        if out.returncode:
            raise CompileError(f"g++ could not compile the kernel source for the emulator:\n"
                               f"{out.stderr[-6000:]}")
        os.replace(tmp + ".so", lib)  # atomic: a concurrent run sees all of it or nothing
    finally:
        for leftover in (tmp, tmp + ".so"):
            if os.path.exists(leftover):
                os.remove(leftover)
    _prune(folder)
    return lib


def _prune(folder: Path, days: float = 30.0) -> None:
    """Remove libraries not used for ``days`` (each kernel edit leaves a new one behind)."""
    cutoff = time.time() - days * 86400
    for old in folder.glob("*.so"):
        try:
            if old.stat().st_mtime < cutoff:
                old.unlink()
        except OSError:
            pass  # another run removed or replaced it
