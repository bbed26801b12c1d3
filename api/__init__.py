"""The top layer: settings (the only place that reads the environment), the HTTP API, the job
worker and the CLI."""

from api.app import create_app
from api.service import Lore, Upload
from api.settings import Settings

__all__ = ["Lore", "Settings", "Upload", "create_app"]
