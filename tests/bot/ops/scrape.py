"""Reading ``/healthz`` and ``/metrics`` the way a monitoring system does."""

from __future__ import annotations

import json
from typing import Any

import aiohttp
from prometheus_client.parser import text_string_to_metric_families


async def healthz(base: str) -> tuple[int, dict[str, Any]]:
    async with aiohttp.ClientSession() as http, http.get(f"{base}/healthz") as resp:
        return resp.status, json.loads(await resp.text())


async def metrics(base: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample: (name, sorted labels) -> value."""
    async with aiohttp.ClientSession() as http, http.get(f"{base}/metrics") as resp:
        assert resp.status == 200
        assert resp.headers["Content-Type"].startswith("text/plain;")
        text = await resp.text()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def value(
    samples: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str
) -> float:
    """One sample's value; 0 when it is not there (a labelled counter never incremented)."""
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)
