"""The container does not serve /metrics to the world (issue 33, item 8): the image listens
on its loopback only and exposes no port; compose publishes the port on the host's loopback
only; docs/operating.md says so and says where the secret key lives."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def test_the_image_serves_health_and_metrics_on_its_loopback_only() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    addr = re.findall(r"MAFIABOT_HTTP_ADDR=(\S+)", dockerfile)
    assert addr == ["127.0.0.1:9464"]
    assert not re.search(r"^\s*EXPOSE\b", dockerfile, re.MULTILINE)
    assert "http://127.0.0.1:9464/healthz" in dockerfile  # its health check still reaches it


def test_compose_publishes_on_the_hosts_loopback_only() -> None:
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
    for name, service in compose["services"].items():
        for port in service.get("ports", []):
            assert str(port).startswith("127.0.0.1:"), (name, port)


def test_operating_docs_name_the_safe_setting_and_the_keys_place() -> None:
    text = " ".join((ROOT / "docs" / "operating.md").read_text().split())
    assert "127.0.0.1:9464:9464" in text and 'never `"9464:9464"`' in text
    assert "/data/secret.key" in text and "MAFIABOT_SECRET_KEY" in text
