"""The per-place delivery queue: order, merging of Game-Manager lines, retries, faults."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import discord

from bot.discord.delivery import Delivery, Job


def http_error(status: int, code: int = 0) -> discord.HTTPException:
    response = SimpleNamespace(status=status, reason="injected")
    cls = {403: discord.Forbidden, 404: discord.NotFound}.get(status, discord.HTTPException)
    return cls(response, {"message": "injected", "code": code})


async def test_order_per_key_and_merging_of_queued_manager_lines() -> None:
    sent: list[tuple[str, str]] = []
    gate = asyncio.Event()

    def job(key: str, text: str, merge: bool = True) -> Job:
        async def send(t: str) -> None:
            await gate.wait()
            sent.append((key, t))

        return Job(send=send, text=text, merge=merge)

    faults: list[BaseException] = []

    async def on_fault(j: Job, e: BaseException) -> None:
        faults.append(e)

    box = Delivery(on_fault)
    box.put("a", job("a", "one"))  # taken at once, waits on the gate
    await asyncio.sleep(0)
    for text in ("two", "three"):
        box.put("a", job("a", text))
    box.put("a", job("a", "speech", merge=False))
    box.put("a", job("a", "four"))
    box.put("b", job("b", "other place"))
    assert box.pending("a") == 4
    gate.set()
    await box.drain()
    assert [t for k, t in sent if k == "a"] == ["one", "two\nthree", "speech", "four"]
    assert [t for k, t in sent if k == "b"] == ["other place"]
    assert faults == [] and box.pending() == 0 and not box._tasks


async def test_transient_errors_are_retried_until_sent_and_permanent_ones_reported() -> None:
    attempts: list[str] = []
    errors = [http_error(429), http_error(503), OSError("reset")]

    async def flaky(text: str) -> None:
        attempts.append(text)
        if errors:
            raise errors.pop(0)

    async def forbidden(text: str) -> None:
        raise http_error(403, 50013)

    faults: list[tuple[str, BaseException]] = []

    async def on_fault(j: Job, e: BaseException) -> None:
        faults.append((j.text, e))

    box = Delivery(on_fault, base_backoff=0.001)
    done: list[str] = []
    box.put("k", Job(send=flaky, text="must arrive", on_done=[lambda: done.append("x")]))
    box.put("k", Job(send=forbidden, text="not allowed"))
    box.put("k", Job(send=flaky, text="after"))
    await box.drain()
    assert attempts == ["must arrive"] * 4 + ["after"]
    assert [t for t, _ in faults] == ["not allowed"] and isinstance(faults[0][1], discord.Forbidden)
    assert box.retried == 3 and box.failed == 1 and box.sent == 2 and done == ["x"]
