"""`veernet` commands beyond the pipeline stages (sample, digitize, summary...), one module each.

Every module here defines `HELP` (one line), `add_arguments(parser)` and `run(args) -> dict`; the
command is named after the module. The CLI finds them at start-up instead of importing them, so
adding a command never edits `cli.py`, whose code is part of every stage's identity (a CLI edit
would otherwise make every trained model look stale).
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType


def discover() -> list[ModuleType]:
    """The command modules of this package, by name."""
    return [importlib.import_module(f"{__name__}.{info.name}")
            for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name) if not info.name.startswith("_")]
