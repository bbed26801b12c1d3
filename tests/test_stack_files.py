"""The compose stack's files agree with the code (no Docker engine runs here to try them; the
processes they start are tested in test_worker_tier.py): every lore service's environment is a
valid configuration of the worker tier, Qdrant's image is one the pinned qdrant-client talks
to, the proxy reaches every API instance, and the image runs as a user with Debian's Chromium."""

from __future__ import annotations

import importlib.metadata
import re
from pathlib import Path

import pytest
import yaml

from api.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVICES = COMPOSE["services"]
LORE = {name: s for name, s in SERVICES.items() if s.get("image") == "lore:latest"}


def minor(version: str) -> tuple[int, int]:
    major, minor_, *_ = (int(x) for x in re.findall(r"\d+", version))
    return major, minor_


def test_the_stack_runs_two_api_instances_and_workers() -> None:
    commands = [s["command"] for s in LORE.values()]
    assert commands.count(["lore", "serve"]) == 2
    assert ["lore", "worker"] in commands
    assert all(s.get("restart") == "unless-stopped" for s in SERVICES.values())
    assert all("healthcheck" in SERVICES[name] for name in ("postgres", "qdrant", "rabbitmq"))
    upstream = (ROOT / "deploy" / "nginx.conf").read_text()
    apis = [name for name, s in LORE.items() if s["command"] == ["lore", "serve"]]
    assert sorted(re.findall(r"server (\S+):8741", upstream)) == sorted(apis)


@pytest.mark.parametrize("service", sorted(LORE))
def test_each_lore_service_is_a_valid_worker_tier_configuration(
    service: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in LORE[service]["environment"].items():
        monkeypatch.setenv(key, str(value))
    settings = Settings()
    assert settings.queue.url and settings.redis_url and settings.qdrant.url
    assert settings.database_url and settings.database_url.startswith("postgresql")


def test_qdrants_image_is_one_the_pinned_client_supports() -> None:
    image = SERVICES["qdrant"]["image"]
    server = minor(image.rsplit(":", 1)[1])
    client = minor(importlib.metadata.version("qdrant-client"))
    # qdrant-client's own rule: the same major version, minor versions at most 1 apart
    assert server[0] == client[0] and abs(server[1] - client[1]) <= 1, (image, client)


def test_the_image_runs_as_a_user_with_debians_chromium_and_cpu_torch() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    users = re.findall(r"^USER (\S+)", dockerfile, re.M)
    assert users and users[-1] not in ("root", "0")
    assert re.search(r"apt-get install[^\n]*\\\n(?:[^\n]*\\\n)*[^\n]*\bchromium\b", dockerfile)
    assert "download.pytorch.org/whl/cpu" in dockerfile
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert {".git", ".venv", ".lore"} <= set(ignored)
