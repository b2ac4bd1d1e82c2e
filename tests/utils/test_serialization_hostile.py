"""Hostile checkpoint files: ``load`` refuses each one with a ``SerializationError`` naming the
file, or loads exactly what was saved, and never allocates much more than the file holds.

The files are built by hand (zip and .npy structures, as their specifications lay them out) so
that each one breaks exactly one rule; CRCs are right unless the test is about CRCs, so the rule
under test is what refuses them. Memory is measured with ``tracemalloc``, which sees NumPy's
array allocations.
"""

from __future__ import annotations

import errno
import io
import json
import os
import pathlib
import re
import signal
import struct
import subprocess
import sys
import textwrap
import time
import tracemalloc
import warnings
import zipfile
import zlib
from typing import Any, Callable

import numpy as np
import pytest

import autograd_gpu as ag
from autograd_gpu.utils import _archive, _atomic, serialization
from autograd_gpu.utils.serialization import SerializationError

from .test_serialization import exact

MiB = 1 << 20


# ---- building files -------------------------------------------------------------------------

def npy(arr: Any) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.asarray(arr), allow_pickle=False)
    return buf.getvalue()


def raw_npy(header: str, data: bytes = b"", version: tuple[int, int] = (1, 0)) -> bytes:
    """A .npy member with the literal ``header`` (its dict text) and ``data``."""
    text = header.encode("latin1") + b"\n"
    size = struct.pack("<H" if version == (1, 0) else "<I", len(text))
    return b"\x93NUMPY" + bytes(version) + size + text + data


def node(key: str = "t0", dtype: str = "float32", shape: Any = (2,), **over: Any) -> Any:
    return {"$": "tensor", "key": key, "dtype": dtype, "shape": list(shape), "device": "cpu",
            "requires_grad": False, "parameter": False, **over}


def header(root: Any) -> bytes:
    text = json.dumps({"format": "autograd_gpu.save", "version": 1, "root": root}).encode()
    return npy(np.frombuffer(text, dtype=np.uint8))


def checkpoint(root: Any, members: dict[str, bytes],
               compress: int = zipfile.ZIP_STORED) -> bytes:
    """A zip with ``root`` as its structure header and ``members`` (name -> member bytes)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("__autograd_gpu__.npy", header(root))
        for name, data in members.items():
            zf.writestr(name, data, compress_type=compress)
    return buf.getvalue()


def saved(obj: Any) -> bytes:
    buf = io.BytesIO()
    ag.save(obj, buf)
    return buf.getvalue()


def central_entry(content: bytes, name: str) -> int:
    """Offset of ``name``'s entry in the zip's central directory."""
    at = content.index(b"PK\x01\x02")
    while content[at + 46:at + 46 + len(name)] != name.encode():
        at = content.index(b"PK\x01\x02", at + 4)
    return at


def patched(content: bytes, at: int, fmt: str, *values: int) -> bytes:
    out = bytearray(content)
    struct.pack_into(fmt, out, at, *values)
    return bytes(out)


def peak_bytes(fn: Callable[[], Any]) -> int:
    """The peak of traced allocations while ``fn`` runs (its result is dropped)."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def refused(content: bytes, match: str, tmp_path: pathlib.Path) -> int:
    """Assert ``content`` is refused from a path and from a file object; the peak memory."""
    path = tmp_path / "hostile.pt"
    path.write_bytes(content)
    with pytest.raises(SerializationError, match=match) as info:
        ag.load(path)
    assert "hostile.pt" in str(info.value)
    with pytest.raises(SerializationError, match=match):
        ag.load(io.BytesIO(content))

    def attempt() -> None:
        with pytest.raises(SerializationError):
            ag.load(io.BytesIO(content))
    return peak_bytes(attempt)


# ---- reference amplification ----------------------------------------------------------------

def test_one_array_named_many_times_is_read_once_and_shared(
        tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    arr = np.arange(MiB, dtype=np.float32)  # 4 MiB
    n = 3000  # each a full copy before the fix: 12 GiB
    flags = [{}, {"requires_grad": True}, {"parameter": True, "requires_grad": True}]
    root = {"$": "list", "items": [node(shape=arr.shape, **flags[i % 3]) for i in range(n)]}
    content = checkpoint(root, {"t0.npy": npy(arr)})
    reads: list[str] = []
    real = _archive.Archive.read
    monkeypatch.setattr(_archive.Archive, "read",
                        lambda self, name: reads.append(name) or real(self, name))
    out = ag.load(io.BytesIO(content))
    assert reads == ["__autograd_gpu__.npy", "t0.npy"]
    assert len(out) == n and len({id(t) for t in out}) == 3
    assert all(t is out[i % 3] for i, t in enumerate(out))
    assert {t.data_ptr() for t in out} == {out[0].data_ptr()}
    assert isinstance(out[2], ag.nn.Parameter) and out[1].requires_grad and out[1].is_leaf
    out[0].add_(1)  # one storage, one version counter: the change shows through every alias
    assert float(out[2][5]) == 6.0 and out[1]._version == out[0]._version == 1
    monkeypatch.undo()
    peak = peak_bytes(lambda: ag.load(io.BytesIO(content)))
    assert peak < 2 * len(content), (peak, len(content))


def test_nodes_naming_one_array_must_agree_on_it() -> None:
    arr = npy(np.ones(4, np.float32))
    for other, match in [(node(shape=[2, 2]), r"float32\[4\], but the header also says "
                                                   r"float32\[2, 2\]"),
                         (node(dtype="int32", shape=[4]), "also says int32"),
                         (node(shape=[4], device="cuda:0"), "saved on both cpu and cuda:0")]:
        content = checkpoint({"$": "list", "items": [node(shape=[4]), other]}, {"t0.npy": arr})
        with pytest.raises(SerializationError, match=match):
            ag.load(io.BytesIO(content))


def test_overlapping_members_are_refused(tmp_path: pathlib.Path) -> None:
    """The stored-zip bomb: member t1 lies inside member t0's bytes, so reading both would
    read the same bytes twice (nested n deep: n times the file)."""
    inner_data = npy(np.arange(4, dtype=np.float32))
    inner = struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, 0, 0, 0, zlib.crc32(inner_data),
                        len(inner_data), len(inner_data), 6, 0) + b"t1.npy" + inner_data
    outer_npy_head = npy(np.zeros(len(inner), np.uint8))[:-len(inner)]
    outer_data = outer_npy_head + inner
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("t0.npy", outer_data)
        zf.writestr("__autograd_gpu__.npy", header(
            {"$": "list", "items": [node("t0", "uint8", [len(inner)]), node("t1", shape=[4])]}))
    content = buf.getvalue()
    # add t1's central entry (pointing inside t0) by rewriting the directory from zipfile's view
    with zipfile.ZipFile(io.BytesIO(content)) as zf:
        infos = zf.infolist()
        cd_start = zf.start_dir  # type: ignore[attr-defined]
    t1 = zipfile.ZipInfo("t1.npy")
    t1.header_offset = 30 + len("t0.npy") + len(outer_npy_head)
    t1.CRC = zlib.crc32(inner_data)
    t1.compress_size = t1.file_size = len(inner_data)
    directory = b"".join(central(i) for i in [*infos, t1])
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 3, 3, len(directory), cd_start, 0)
    hostile = content[:cd_start] + directory + end
    assert refused(hostile, "members 't0.npy' and 't1.npy' overlap", tmp_path) < 256 * 1024


def central(info: zipfile.ZipInfo) -> bytes:
    name = info.filename.encode()
    return struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, 0, 0, 0, info.CRC,
                       info.compress_size, info.file_size, len(name), 0, 0, 0, 0, 0,
                       info.header_offset) + name


# ---- declared sizes and shapes --------------------------------------------------------------

F4 = "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }"


SHAPE_CASES = [
    ("oversize", raw_npy(F4 % "(1000000000,)", b"\0" * 8),
     r"declares float32\[1000000000\] \(4000000000 bytes\) but holds 8 bytes"),
    ("expression", raw_npy(F4 % "(1 << 40, 1 << 40)", b"\0" * 8), "never writes"),
    ("product-overflows-int64", raw_npy(F4 % "(1099511627776, 1099511627776)", b"\0" * 8),
     "but holds 8 bytes"),
    ("negative", raw_npy(F4 % "(-1,)", b"\0" * 8), "never writes"),
    ("negative-pair", raw_npy(F4 % "(-2, -1)", b"\0" * 8), "never writes"),
    ("empty-with-huge-dim", raw_npy(F4 % "(0, 10000000000000000000)"), "impossible shape"),
    ("empty-with-absurd-dim", raw_npy(F4 % "(0, 1180591620717411303424)"), "never writes"),
    ("65-dims", raw_npy(F4 % ("(" + ", ".join(["1"] * 65) + ")"), b"\0" * 4),
     "declares 65 dimensions"),
    ("short-data", raw_npy(F4 % "(2,)", b"\0" * 7), r"declares float32\[2\] \(8 bytes\) but "
                                                     "holds 7"),
    ("long-data", raw_npy(F4 % "(2,)", b"\0" * 9), "but holds 9"),
    ("object", raw_npy("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", b"\0" * 16),
     "never writes: \"{'descr': '\\|O'"),
    ("unicode", raw_npy("{'descr': '<U2', 'fortran_order': False, 'shape': (2,), }",
                        b"\0" * 16), "never writes"),
    ("structured", raw_npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }",
                           b"\0" * 8), "never writes"),
    ("subarray", raw_npy("{'descr': ('<f4', (1000000,)), 'fortran_order': False, "
                         "'shape': (2,), }", b"\0" * 8), "never writes"),
    ("fortran", raw_npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", b"\0" * 8),
     "Fortran order"),
    ("npy-3.0", raw_npy(F4 % "(2,)", b"\0" * 8, version=(3, 0)), "version 3.0"),
    ("huge-npy-header", raw_npy(F4 % "(2,)" + " " * 20_000, b"\0" * 8, version=(2, 0)),
     r"declares a \d+-byte .npy header"),
    ("npy-header-past-member", b"\x93NUMPY\x01\x00\xff\xff{",
     "declares a 65535-byte .npy header in 11 bytes"),
    ("cut-magic", b"\x93NUMPY\x01", "not a .npy array"),
    ("not-npy", b"not npy at all", "not a .npy array"),
    ("extra-key", raw_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}",
                          b"\0" * 8), "never writes"),
    ("deep-header", raw_npy("(" * 8000), "never writes"),
    ("unknown-dtype", raw_npy("{'descr': '<f3', 'fortran_order': False, 'shape': (2,), }",
                              b"\0" * 6), "unknown dtype '<f3'"),
    ("no-padding-newline", raw_npy(F4 % "(2,)", b"\0" * 8)[:-9] + b" " + b"\0" * 8,
     "never writes"),
    ("bool-not-0-or-1", raw_npy("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }",
                                b"\x01\x02"), "bool array holding bytes other than 0 and 1"),
]


@pytest.mark.parametrize("member,match", [pytest.param(m, r, id=i) for i, m, r in SHAPE_CASES])
def test_declared_shapes_must_match_the_member_bytes(member: bytes, match: str,
                                                     tmp_path: pathlib.Path) -> None:
    content = checkpoint(node(), {"t0.npy": member})
    peak = refused(content, f"cannot read tensor data 't0': member 't0.npy' .*(?:{match})",
                   tmp_path)
    assert peak < 256 * 1024, peak


def test_zip_sizes_must_fit_in_the_file(tmp_path: pathlib.Path) -> None:
    good = checkpoint(node(), {"t0.npy": npy(np.ones(2, np.float32))})
    entry = central_entry(good, "t0.npy")
    for size, match in [(2**31, r"declares 2147483648 bytes but the file holds \d+ after its "
                                r"start"),
                        (200, "runs into the zip directory")]:
        hostile = patched(good, entry + 20, "<LL", size, size)
        assert refused(hostile, match, tmp_path) < 256 * 1024
    hostile = patched(good, entry + 20, "<LL", 10, 200)
    refused(hostile, "stored but declares 10 stored bytes for 200 bytes", tmp_path)
    hostile = patched(good, entry + 42, "<L", 7)
    refused(hostile, "has no local header at byte 7", tmp_path)


def test_a_big_endian_member_loads_the_same_values() -> None:
    arr = np.arange(5, dtype=">f4")
    out = ag.load(io.BytesIO(checkpoint(node(shape=[5]), {"t0.npy": npy(arr)})))
    assert out.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0] and out.dtype == ag.float32


# ---- member kinds save never writes ---------------------------------------------------------

@pytest.mark.parametrize("method", [zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA])
def test_compressed_members_are_refused_before_decompressing(method: int,
                                                             tmp_path: pathlib.Path) -> None:
    bomb = npy(np.zeros(16 * MiB, np.uint8))  # a 16 MiB array in a few KiB
    content = checkpoint(node(dtype="uint8", shape=[16 * MiB]), {"t0.npy": bomb}, method)
    assert len(content) < 24 * 1024
    name = {8: "deflate", 12: "bzip2", 14: "lzma"}[method]
    peak = refused(content, f"member 't0.npy' is {name}-compressed; autograd_gpu.save stores "
                            "members uncompressed", tmp_path)
    assert peak < 256 * 1024, peak


def test_savez_compressed_and_a_compressed_local_header_are_refused(
        tmp_path: pathlib.Path) -> None:
    buf = io.BytesIO()
    np.savez_compressed(buf, __autograd_gpu__=np.frombuffer(b"{}", np.uint8))
    refused(buf.getvalue(), "deflate-compressed", tmp_path)
    good = checkpoint(node(), {"t0.npy": npy(np.ones(2, np.float32))})
    local = good.rindex(b"PK\x03\x04", 0, good.index(b"t0.npy"))
    refused(patched(good, local + 8, "<H", 8), "deflate-compressed in its local header", tmp_path)


def test_duplicate_unreferenced_and_missing_members_are_refused(tmp_path: pathlib.Path) -> None:
    arr = npy(np.ones(2, np.float32))
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # zipfile warns "Duplicate name"
        with zipfile.ZipFile(buf, "w") as zf:
            zf.writestr("__autograd_gpu__.npy", header(node()))
            zf.writestr("t0.npy", arr)
            zf.writestr("t0.npy", npy(np.full(2, 9.0, np.float32)))
    refused(buf.getvalue(), "the member name 't0.npy' appears twice", tmp_path)
    refused(checkpoint(node(), {"t0.npy": arr, "t1.npy": arr}),
            "member 't1.npy' is not referred to by the structure header", tmp_path)
    refused(checkpoint(node(), {"t0.npy": arr, "notes.txt": b"hi"}),
            "member 'notes.txt' is not referred to", tmp_path)
    refused(checkpoint(node("t1"), {"t0.npy": arr}), "tensor data 't1' is missing", tmp_path)
    encrypted = patched(checkpoint(node(), {"t0.npy": arr}),
                        central_entry(checkpoint(node(), {"t0.npy": arr}), "t0.npy") + 8, "<H", 1)
    refused(encrypted, "member 't0.npy' is encrypted", tmp_path)


@pytest.mark.parametrize("depth", [450, 5000])
def test_deeply_nested_headers_are_refused(depth: int) -> None:
    text = ('{"format": "autograd_gpu.save", "version": 1, "root": '
            + '{"$": "list", "items": [' * depth + "1" + "]}" * depth + "}").encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("__autograd_gpu__.npy", npy(np.frombuffer(text, np.uint8)))
    # NOTE: where the recursion limit strikes (JSON parsing or rebuilding) depends on the Python
    # version (3.12 loads 450 levels; 3.11 does not); either way a clean refusal, or the value
    try:
        got = ag.load(io.BytesIO(buf.getvalue()))
    except SerializationError as e:
        assert re.search("nested too deeply|corrupt structure header", str(e)), e
        return
    assert depth < 1000, "a structure deeper than the recursion limit loaded"
    for _ in range(depth):
        assert isinstance(got, list) and len(got) == 1
        got = got[0]
    assert got == 1


# ---- truncation and bit flips ---------------------------------------------------------------

def sample() -> Any:
    return {"w": ag.arange(6, dtype=ag.float32).reshape(2, 3).requires_grad_(),
            "mask": ag.tensor([True, False]), "step": 3, "name": "ab"}


def test_every_truncation_is_refused() -> None:
    content = saved(sample())
    for n in range(len(content)):
        with pytest.raises(SerializationError, match=r"<BytesIO>"):
            ag.load(io.BytesIO(content[:n]))

    def some() -> None:
        for n in range(0, len(content), 7):
            with pytest.raises(SerializationError):
                ag.load(io.BytesIO(content[:n]))
    assert peak_bytes(some) < 256 * 1024


def test_every_bit_flip_is_refused_or_harmless() -> None:
    content = saved(sample())
    want = exact(sample())
    outcomes = {"refused": 0, "same": 0}
    for bit in range(8 * len(content)):
        flipped = bytearray(content)
        flipped[bit // 8] ^= 1 << (bit % 8)
        try:
            got = ag.load(io.BytesIO(bytes(flipped)))
        except SerializationError:
            outcomes["refused"] += 1
            continue
        assert exact(got) == want, f"bit {bit} changed the value silently"
        outcomes["same"] += 1
    # the flips into any member's bytes (all CRC-checked) or into the directory's names and
    # offsets are refused; those into timestamps, version fields and redundant local copies of
    # sizes are harmless
    assert outcomes["refused"] > 6 * len(content), outcomes

    def one_per_byte() -> None:
        for at in range(0, len(content)):
            flipped = bytearray(content)
            flipped[at] ^= 1 << (at % 8)
            try:
                ag.load(io.BytesIO(bytes(flipped)))
            except SerializationError:
                pass
    assert peak_bytes(one_per_byte) < 256 * 1024


# ---- temp files of killed saves -------------------------------------------------------------

def temp_file(folder: pathlib.Path, pid: int, host: str | None = None, age_s: float = 0) -> str:
    path = _atomic.temp_name(str(folder / "ckpt.pt"), pid)
    if host is not None:
        path = path.replace(f".agsave-{_atomic.host_tag()}-", f".agsave-{host}-")
    with open(path, "wb") as fh:
        fh.write(b"PK\x03\x04 half a checkpoint")
    if age_s:
        os.utime(path, (time.time() - age_s, time.time() - age_s))
    return os.path.basename(path)


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


@pytest.mark.skipif(os.name != "posix", reason="pid liveness is checked on POSIX only")
def test_a_killed_save_leaves_a_temp_file_that_the_next_save_removes(
        tmp_path: pathlib.Path) -> None:
    script = textwrap.dedent(f"""
        import os, signal, sys
        sys.path.insert(0, {os.path.dirname(os.path.dirname(ag.__file__))!r})
        import autograd_gpu as ag
        from autograd_gpu.utils import serialization

        def write_then_die(fh, arrays):
            fh.write(b"PK\\x03\\x04" + bytes(4096))
            fh.flush()
            os.kill(os.getpid(), signal.SIGKILL)

        serialization._write_archive = write_then_die
        ag.save({{"w": ag.ones(1000)}}, {str(tmp_path / "ckpt.pt")!r})
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=60)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    left = os.listdir(tmp_path)
    assert len(left) == 1 and left[0].startswith(".ckpt.pt.agsave-") and "ckpt.pt" not in left
    ag.save({"w": ag.ones(3)}, tmp_path / "other.pt")
    assert os.listdir(tmp_path) == ["other.pt"]


@pytest.mark.skipif(os.name != "posix", reason="pid liveness is checked on POSIX only")
def test_only_stale_temp_files_are_removed(tmp_path: pathlib.Path) -> None:
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        dead = dead_pid()
        stale = [temp_file(tmp_path, dead),
                 temp_file(tmp_path, os.getpid()),  # ours, but no save of ours is writing it
                 temp_file(tmp_path, live.pid, age_s=2 * _atomic.STALE_AGE_S),
                 temp_file(tmp_path, dead, host="0badc0de", age_s=2 * _atomic.STALE_AGE_S)]
        kept = [temp_file(tmp_path, live.pid),
                temp_file(tmp_path, dead, host="0badc0de"),  # another host: its pids are unknown
                temp_file(tmp_path, os.getppid())]
        legacy_old = tmp_path / ".ckpt.pt.0123456789ab.tmp"
        legacy_old.write_bytes(b"PK\x03\x04 half")
        foreign_old = tmp_path / ".notes.0123456789ab.tmp"
        foreign_old.write_bytes(b"someone else's data")
        legacy_new = tmp_path / ".ckpt.pt.ba9876543210.tmp"
        legacy_new.write_bytes(b"")
        for p in (legacy_old, foreign_old):
            os.utime(p, (time.time() - 2 * _atomic.STALE_AGE_S,) * 2)
        stale.append(legacy_old.name)
        kept += [foreign_old.name, legacy_new.name]
        (tmp_path / f".x.agsave-{_atomic.host_tag()}-{dead}-0123456789ab.tmp").mkdir()
        kept.append(f".x.agsave-{_atomic.host_tag()}-{dead}-0123456789ab.tmp")
        (tmp_path / ".y.tmp").write_bytes(b"")
        kept.append(".y.tmp")
        ag.save(1, tmp_path / "ckpt.pt")
        assert sorted(os.listdir(tmp_path)) == sorted([*kept, "ckpt.pt"])
        assert not set(stale) & set(os.listdir(tmp_path))
    finally:
        live.kill()
        live.wait()


def test_a_save_in_progress_keeps_its_temp_file(tmp_path: pathlib.Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    real = serialization._write_archive
    seen: list[list[str]] = []

    def write_and_clean(fh: Any, arrays: Any) -> None:
        real(fh, arrays)
        seen.append(_atomic.clean_stale_temps(str(tmp_path)))  # another thread's save, say
        seen.append(os.listdir(tmp_path))

    monkeypatch.setattr(serialization, "_write_archive", write_and_clean)
    ag.save({"w": ag.ones(2)}, tmp_path / "ckpt.pt")
    assert seen[0] == [] and len(seen[1]) == 1 and seen[1][0].startswith(".ckpt.pt.agsave-")
    assert os.listdir(tmp_path) == ["ckpt.pt"]


# ---- errors name the target -----------------------------------------------------------------

def test_save_errors_name_the_target_not_the_temp_file(tmp_path: pathlib.Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "ckpt.pt"
    with pytest.raises(FileNotFoundError) as info:
        ag.save(1, tmp_path / "missing" / "ckpt.pt")
    assert info.value.filename == str(tmp_path / "missing" / "ckpt.pt")
    assert ".tmp" not in str(info.value) and info.value.__cause__ is None

    (tmp_path / "adir").mkdir()
    (tmp_path / "adir" / "x").write_bytes(b"")
    with pytest.raises(OSError) as info:
        ag.save(1, tmp_path / "adir")
    assert info.value.filename == str(tmp_path / "adir") and ".tmp" not in str(info.value)

    def full_disk(fh: Any, arrays: Any) -> None:
        fh.write(b"PK")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(serialization, "_write_archive", full_disk)
    with pytest.raises(OSError, match=r"No space left on device: '.*ckpt\.pt'$") as info:
        ag.save(1, target)
    assert info.value.errno == errno.ENOSPC and ".tmp" not in str(info.value)
    assert os.listdir(tmp_path) == ["adir"]
