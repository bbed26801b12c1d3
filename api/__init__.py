"""The top layer: settings (the only place that reads the environment), the HTTP API, the job
worker and the CLI.

The names below load on first use: `import api.client` (the HTTP client) and `lore --help` must
not import the server, its store and the crawler (2–3 s, 1,700 modules)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from api.app import create_app
    from api.service import Lore, Upload
    from api.settings import Settings

__all__ = ["Lore", "Settings", "Upload", "create_app"]
_WHERE = {
    "create_app": "api.app",
    "Lore": "api.service",
    "Upload": "api.service",
    "Settings": "api.settings",
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'api' has no attribute {name!r}")
    return getattr(importlib.import_module(_WHERE[name]), name)
