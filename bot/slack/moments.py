"""When and which: a Slack event's moment and its platform id, as the service wants them.

Slack stamps every message and every block action with a ``ts`` (``"1700000000.000123"``:
seconds and microseconds since the epoch, as a string). That is the moment the person acted;
the service judges the action against the phase current then, not when it happened to arrive
(`GameService.say` / ``vote`` / ``night_act``, ``at=``). The ids let the service apply each
action once, whatever Slack re-delivers or whoever replays a signed request:

- a booth line: ``slack:<team>:<channel>:<ts>`` (the same whether it came live or was read back
  from the history after a restart, which ``event_id`` and ``client_msg_id`` are not);
- a menu choice: ``slack:action:<user>:<action_ts>``.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta


def ts_key(ts: str) -> tuple[int, int]:
    """Slack ts compare as (seconds, microseconds) numbers, never as floats or strings."""
    whole, _, frac = ts.partition(".")
    try:
        return int(whole or 0), int((frac or "0").ljust(6, "0")[:6])
    except ValueError:
        return 0, 0


def ts_moment(ts: str | None) -> datetime | None:
    """The aware UTC moment of a Slack ts; None when there is none (the service uses now)."""
    seconds, micros = ts_key(ts or "")
    if seconds <= 0:
        return None
    return datetime.fromtimestamp(seconds, UTC) + timedelta(microseconds=micros)


def line_id(team: str, channel: str, ts: str) -> str:
    return f"slack:{team}:{channel}:{ts}"


def action_id(user: str, action_ts: str) -> str | None:
    """None without an ``action_ts`` (no id is better than one every click would share)."""
    return f"slack:action:{user}:{action_ts}" if action_ts else None
