"""One look at the model server before a local game: can it be reached at all?

With ``MAFIABOT_LLM`` set and the server down, every agent turn would wait out its retries
(and fall back to the baseline agent one call at a time). ``play`` and ``simulate`` ask once,
at start, by opening a connection to the server (no request, no key sent), and say in one line
what is wrong and what the game does instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from urllib.parse import urlsplit

from rich.console import Console

from bot.settings import Settings

#: where each provider's SDK goes when no *_BASE_URL is set
DEFAULT_BASE = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com"}
BASE_ENV = {"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL"}


def model_server(settings: Settings) -> str | None:
    """The base URL the configured model (``MAFIABOT_LLM``) is asked at, or None."""
    provider = settings.llm.partition(":")[0]
    if provider not in DEFAULT_BASE:
        return None
    return os.environ.get(BASE_ENV[provider]) or DEFAULT_BASE[provider]


async def unreachable_model(settings: Settings, within: float = 5.0) -> str | None:
    """None when the model server takes a connection; else what is wrong, in words."""
    url = model_server(settings)
    if url is None:
        return None
    parts = urlsplit(url)
    host = parts.hostname
    if not host:
        return f"the model server address {url!r} is not a URL"
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return f"the model server address {url!r} has a bad port"
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), within)
    except (OSError, TimeoutError) as e:
        why = "no answer" if isinstance(e, TimeoutError) else (e.strerror or type(e).__name__)
        return f"the model server at {url} can't be reached ({why})"
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return None


async def agent_for_the_model(settings: Settings, agent: str, say: Console) -> str:
    """``agent`` ("llm" or "baseline"), or "baseline" when the model server can't be
    reached: then ``say`` (a rich Console) prints one line saying so."""
    if agent != "llm":
        return agent
    problem = await unreachable_model(settings)
    if problem is None:
        return agent
    say.print(
        f"[yellow]{problem}; the offline baseline agent plays those seats.[/]",
        markup=True,
        highlight=False,
        soft_wrap=True,
    )
    return "baseline"
