"""``python -m autograd_gpu``: the command line (see ``cli.py``)."""

from __future__ import annotations

from .cli import main

raise SystemExit(main())
