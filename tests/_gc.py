"""Byte-exact memory assertions need the garbage collector held still: a collection in the middle
of a measurement may free other tests' buffers and change the count."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Collect now, then keep the collector off until the block ends."""
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
