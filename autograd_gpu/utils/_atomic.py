"""Atomic file replacement for ``save``, and cleanup of the temp files that killed saves leave.

A save writes ``.<name>.agsave-<host>-<pid>-<random>.tmp`` beside the target (``<host>``: 8 hex
digits of a hash of the host name), fsyncs it and renames it over the target. A process killed
mid-write leaves that file behind; the next save into the same folder deletes such leftovers
once they are certainly stale:

- written on this host by a process that no longer exists, or by this very process but not by a
  save now in progress (a restarted container often reuses its pid);
- or untouched for ``STALE_AGE_S`` (a day): a save in progress keeps writing, so its file stays
  fresh. This rule also covers other hosts sharing the folder, whose pids cannot be checked
  here, a pid since reused by another process, and the pid-less names that earlier versions
  wrote (``.<name>.<12 hex>.tmp``, deleted only if they hold a zip or nothing).

A live save's temp file is never deleted, whichever process writes it.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import socket
import stat
import time
from typing import Any, Callable

STALE_AGE_S = 24 * 3600
_TEMP = re.compile(r"\..*\.agsave-(?P<host>[0-9a-f]{8})-(?P<pid>[0-9]{1,10})-[0-9a-f]{12}\.tmp",
                   re.DOTALL)
_LEGACY_TEMP = re.compile(r"\..*\.[0-9a-f]{12}\.tmp", re.DOTALL)
_ZIP_START = b"PK\x03\x04"
_ACTIVE: set[str] = set()  # names of the temp files this process is writing now


def host_tag() -> str:
    """The 8 hex digits that mark this host in temp file names."""
    return hashlib.sha256(socket.gethostname().encode("utf-8", "replace")).hexdigest()[:8]


def temp_name(path: str, pid: int | None = None) -> str:
    """A fresh temp file path beside ``path`` for the process ``pid`` (default: this one)."""
    folder, base = os.path.split(os.path.abspath(path))
    # NOTE: the name is cut so that the temp name stays under the usual 255-byte limit.
    pid = os.getpid() if pid is None else pid
    return os.path.join(folder, f".{base[:40]}.agsave-{host_tag()}-{pid}-"
                                f"{secrets.token_hex(6)}.tmp")


def replace_atomically(path: str, write: Callable[[Any], None]) -> None:
    """Call ``write`` on a temp file beside ``path``, fsync it, rename it over ``path``, fsync
    the folder: a crash at any point leaves either the old file or the new one, never a mix.

    Stale temp files in the folder are deleted first. An ``OSError`` names ``path``, never the
    temp file.
    """
    folder = os.path.dirname(os.path.abspath(path))
    clean_stale_temps(folder)
    tmp = temp_name(path)
    # NOTE: registered before the file exists, so no concurrent cleanup can take it.
    _ACTIVE.add(os.path.basename(tmp))
    try:
        # NOTE: os.open with mode 0o666 lets the umask set the permissions, as open() would.
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
        fd = os.open(tmp, flags, 0o666)
        try:
            with os.fdopen(fd, "wb") as fh:
                write(fh)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except BaseException:
            _unlink_quietly(tmp)
            raise
    except OSError as e:
        raise _naming(e, path).with_traceback(e.__traceback__) from None
    finally:
        _ACTIVE.discard(os.path.basename(tmp))
    _fsync_dir(folder)


def clean_stale_temps(folder: str) -> list[str]:
    """Delete the stale temp files of killed saves in ``folder`` (see the module docstring);
    return their names. Files that cannot be read or deleted are left alone."""
    now, host = time.time(), host_tag()
    removed: list[str] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        if _is_stale(entry, host, now):
            try:
                os.unlink(entry.path)
            except OSError:
                continue
            removed.append(entry.name)
    return removed


def _is_stale(entry: os.DirEntry[str], host: str, now: float) -> bool:
    ours = _TEMP.fullmatch(entry.name)
    legacy = ours is None and _LEGACY_TEMP.fullmatch(entry.name) is not None
    if ours is None and not legacy:
        return False
    try:
        st = entry.stat(follow_symlinks=False)
    except OSError:
        return False
    if not stat.S_ISREG(st.st_mode) or entry.name in _ACTIVE:
        return False
    if now - st.st_mtime > STALE_AGE_S:
        return ours is not None or _holds_a_zip_or_nothing(entry.path)
    if ours is None or ours["host"] != host:
        return False
    pid = int(ours["pid"])
    return pid == os.getpid() or not _pid_alive(pid)


def _pid_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists on this host; True when that cannot be told."""
    if os.name != "posix" or pid <= 0:
        return True  # NOTE: on Windows os.kill(pid, 0) would terminate the process
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OSError, OverflowError):
        return True  # PermissionError: it exists but belongs to another user
    return True


def _holds_a_zip_or_nothing(path: str) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(4) in (b"", _ZIP_START)
    except OSError:
        return False


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _naming(e: OSError, path: str) -> OSError:
    """``e`` (raised on the temp file) as the same kind of error about ``path``."""
    try:
        if e.errno is not None:
            return type(e)(e.errno, e.strerror, path)
        return type(e)(f"{e} (saving {path!r})")
    except Exception:  # noqa: BLE001  (an OSError subclass with another constructor)
        return e


def _fsync_dir(path: str) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return  # NOTE: directories cannot be opened on Windows; os.replace is atomic there
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
