"""The container under ``save``/``load``: a zip of ``.npy`` arrays, read within what the file holds.

``write`` stores each array as the member ``<key>.npy`` (NumPy's .npy format, C order) in a zip
without compression (``ZIP_STORED``, with zip64 records so a member may pass 4 GiB), as
``np.savez`` does. ``Archive`` reads such a zip and accepts only what ``write`` produces:

- every member is stored (not compressed, not encrypted) and named once;
- every member lies inside the file and no two overlap, so all of them together hold at most
  the file's bytes, and each is read at most once by its caller;
- every member holds a C-order .npy array (version 1.0 or 2.0) of a bool, integer or float dtype
  whose shape times item size is exactly the member's byte count.

All of that is checked before an array is allocated, and each member's CRC-32 is checked as its
bytes are read, so reading costs at most what the file holds and a flipped bit is refused rather
than loaded. The file object is read in place (no extraction, no temporary copy).
"""

from __future__ import annotations

import io
import math
import re
import struct
import zipfile
import zlib
from typing import Any

# NOTE: numpy is imported here only for the file format, never for compute.
import numpy as np

_LOCAL = struct.Struct("<4s5H3L2H")  # a zip local file header, up to the name and extra field
_LOCAL_SIGNATURE = b"PK\x03\x04"
_ENCRYPTED = 0x1
_UTF8_NAME = 0x800
_METHODS = {8: "deflate", 9: "deflate64", 12: "bzip2", 14: "lzma", 93: "zstd", 95: "xz"}
_NPY_MAGIC = b"\x93NUMPY"
_NPY_MAX_HEADER = 10_000  # NumPy's own limit on the .npy header it will parse
_NPY_MAX_DIMS = 64
# NOTE: the exact header text np.lib.format writes for a bool, integer or float array (a dict
# literal, padded with spaces to a 64-byte boundary): parsed by this pattern, never evaluated.
_NPY_HEADER = re.compile(r"\{'descr': '(?P<descr>[<>|][biufc][0-9]{1,2})', "
                         r"'fortran_order': (?P<fortran>False|True), "
                         r"'shape': \((?P<shape>|[0-9]{1,20},|[0-9]{1,20}(?:, [0-9]{1,20})+)\), "
                         r"\} *\n")
_CHUNK = 1 << 24


class ArchiveError(ValueError):
    """What is wrong with an archive; ``load`` adds the file's name."""


def write(fh: Any, arrays: dict[str, Any]) -> None:
    """Write ``arrays`` (key -> C-contiguous NumPy array) to the binary file ``fh`` as a zip of
    stored ``<key>.npy`` members."""
    with zipfile.ZipFile(fh, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
        for key, arr in arrays.items():
            # NOTE: force_zip64 because the member's size is not announced before it is written.
            with zf.open(f"{key}.npy", "w", force_zip64=True) as out:
                np.lib.format.write_array(out, arr, allow_pickle=False)


class Archive:
    """A zip of ``.npy`` members in the seekable binary file ``fh``, checked on opening.

    Raises:
        ArchiveError: the zip is corrupt or truncated, or holds a member ``write`` never writes
            (compressed, encrypted, named twice, overlapping another, past the end of the file).
    """

    def __init__(self, fh: Any) -> None:
        self._fh = fh
        size = fh.seek(0, io.SEEK_END)
        try:
            with zipfile.ZipFile(fh) as zf:
                infos = zf.infolist()
                data_end = min(size, getattr(zf, "start_dir", size))
        except Exception as e:  # noqa: BLE001  (zipfile raises many kinds on damaged input)
            raise ArchiveError(f"its zip structure is corrupt or truncated "
                               f"({type(e).__name__}: {e})") from e
        self.members: dict[str, tuple[int, int, int]] = {}  # name -> (data offset, size, CRC)
        spans: list[tuple[int, int, str]] = []
        for info in infos:
            name = info.filename
            if name in self.members:
                raise ArchiveError(f"the member name {name!r} appears twice")
            _check_kind(info)
            start = self._data_start(info, size)
            self.members[name] = (start, info.file_size, info.CRC)
            spans.append((info.header_offset, start + info.file_size, name))
        # NOTE: members that overlap would let one stored byte be read as several arrays, a
        # zip-bomb trick that multiplies memory without compression.
        spans.sort()
        end, last = 0, ""
        for begin, stop, name in spans:
            if begin < end:
                raise ArchiveError(f"members {last!r} and {name!r} overlap in the file")
            end, last = stop, name
        if end > data_end:
            raise ArchiveError(f"member {last!r} runs into the zip directory (ends at byte {end}, "
                               f"the directory starts at byte {data_end})")

    def _data_start(self, info: zipfile.ZipInfo, size: int) -> int:
        """Where ``info``'s bytes start, after checking its local header agrees with the
        directory and its declared size fits in the file."""
        name, at = info.filename, info.header_offset
        raw = b""
        if 0 <= at <= size - _LOCAL.size:
            self._fh.seek(at)
            raw = self._fh.read(_LOCAL.size)
        if len(raw) != _LOCAL.size or raw[:4] != _LOCAL_SIGNATURE:
            raise ArchiveError(f"member {name!r} has no local header at byte {at}")
        method, name_len, extra_len = (_LOCAL.unpack(raw)[i] for i in (3, 9, 10))
        local_name = self._fh.read(name_len)
        encoding = "utf-8" if info.flag_bits & _UTF8_NAME else "cp437"
        if local_name.decode(encoding, "replace") != info.orig_filename:
            raise ArchiveError(f"member {name!r} has the name {local_name!r:.80} in its local "
                               "header")
        if method != zipfile.ZIP_STORED:
            raise ArchiveError(f"member {name!r} is {_method_name(method)}-compressed in its "
                               "local header; autograd_gpu.save stores members uncompressed")
        start = at + _LOCAL.size + name_len + extra_len
        if start + info.file_size > size:
            raise ArchiveError(f"member {name!r} declares {info.file_size} bytes but the file "
                               f"holds {max(size - start, 0)} after its start (truncated?)")
        return start

    def read(self, name: str) -> Any:
        """The member ``name`` as a NumPy array in native byte order.

        Raises:
            ArchiveError: the member is not a .npy array that ``write`` writes, its declared shape
                and dtype do not match its size, or its bytes fail the CRC check.
        """
        start, size, crc = self.members[name]
        fh = self._fh
        fh.seek(start)
        prefix = fh.read(min(size, 12))
        if not prefix.startswith(_NPY_MAGIC) or len(prefix) < 10:
            raise ArchiveError(f"member {name!r} is not a .npy array")
        version = (prefix[6], prefix[7])
        if version not in ((1, 0), (2, 0)):
            raise ArchiveError(f"member {name!r} is a .npy of version {version[0]}.{version[1]}; "
                               "autograd_gpu.save writes versions 1.0 and 2.0")
        fixed = 10 if version == (1, 0) else 12
        header_len = int.from_bytes(prefix[8:fixed], "little")
        if header_len > _NPY_MAX_HEADER or fixed + header_len > size:
            raise ArchiveError(f"member {name!r} declares a {header_len}-byte .npy header in "
                               f"{size} bytes")
        fh.seek(start)
        head = fh.read(fixed + header_len)
        if len(head) != fixed + header_len:
            raise ArchiveError(f"member {name!r} is truncated in its .npy header")
        shape, dtype = _parse_npy_header(name, head)
        data_size = size - len(head)
        want = math.prod(shape) * dtype.itemsize
        if want != data_size:
            raise ArchiveError(f"member {name!r} declares {dtype.name}{list(shape)} ({want} "
                               f"bytes) but holds {data_size} bytes of data")
        try:
            arr = np.empty(shape, dtype)
        except (ValueError, MemoryError) as e:
            raise ArchiveError(f"member {name!r} declares an impossible shape {list(shape)} "
                               f"({e})") from e
        flat = arr.reshape(-1).view(np.uint8).data
        check = zlib.crc32(head)
        done = 0
        while done < data_size:
            n = _read_into(fh, flat[done:done + _CHUNK])
            if n <= 0:
                raise ArchiveError(f"member {name!r} is truncated after {done} of {data_size} "
                                   "data bytes")
            check = zlib.crc32(flat[done:done + n], check)
            done += n
        if check != crc:
            raise ArchiveError(f"member {name!r} fails its CRC-32 check (the file is corrupt)")
        if dtype.kind == "b" and data_size and int(np.frombuffer(flat, np.uint8).max()) > 1:
            raise ArchiveError(f"member {name!r} is a bool array holding bytes other than 0 and 1")
        if not dtype.isnative:
            arr = arr.byteswap(inplace=True).view(dtype.newbyteorder("="))
        return arr


def _check_kind(info: zipfile.ZipInfo) -> None:
    """Refuse a member kind ``write`` never writes, from the zip directory alone (before any of
    its bytes are read, so a compressed member is never decompressed)."""
    name = info.filename
    if info.compress_type != zipfile.ZIP_STORED:
        raise ArchiveError(f"member {name!r} is {_method_name(info.compress_type)}-compressed; "
                           "autograd_gpu.save stores members uncompressed")
    if info.flag_bits & _ENCRYPTED:
        raise ArchiveError(f"member {name!r} is encrypted")
    if info.compress_size != info.file_size:
        raise ArchiveError(f"member {name!r} is stored but declares {info.compress_size} stored "
                           f"bytes for {info.file_size} bytes of content")


def _method_name(method: int) -> str:
    return _METHODS.get(method, f"method-{method}")


def _parse_npy_header(name: str, head: bytes) -> tuple[tuple[int, ...], Any]:
    """(shape, dtype) from a .npy header, refusing any header ``write`` never writes."""
    text = head[10 if head[6] == 1 else 12:].decode("latin1")
    found = _NPY_HEADER.fullmatch(text)
    if found is None:
        raise ArchiveError(f"member {name!r} has a .npy header autograd_gpu.save never writes: "
                           f"{text.rstrip()[:100]!r}")
    if found["fortran"] == "True":
        raise ArchiveError(f"member {name!r} is in Fortran order; autograd_gpu.save writes C "
                           "order")
    shape = tuple(int(n) for n in found["shape"].replace(",", " ").split())
    if len(shape) > _NPY_MAX_DIMS:
        raise ArchiveError(f"member {name!r} declares {len(shape)} dimensions; the most is "
                           f"{_NPY_MAX_DIMS}")
    try:
        dtype = np.dtype(found["descr"])
    except TypeError as e:
        raise ArchiveError(f"member {name!r} declares the unknown dtype {found['descr']!r}") from e
    return shape, dtype


def _read_into(fh: Any, buf: memoryview) -> int:
    """Read up to ``len(buf)`` bytes of ``fh`` into ``buf``; the count read (0 at the end)."""
    read_into = getattr(fh, "readinto", None)
    if read_into is not None:
        return int(read_into(buf) or 0)
    chunk = fh.read(len(buf))
    buf[:len(chunk)] = chunk
    return len(chunk)
