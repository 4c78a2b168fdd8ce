"""The export's files: JSON lines and CSV tables, as UTF-8 (`bot.protection.dataset.export`).

A JSON line escapes the characters some readers take for line breaks (U+2028, U+2029, U+0085);
a CSV cell is folded to one line and made inert to spreadsheets (`spreadsheet.inert_cell`).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bot.protection.dataset.spreadsheet import inert_cell
from games.text import one_line

__all__ = ["iso", "json_line", "put", "write_csv", "write_jsonl"]

_JSON_BREAKS = {"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"}


def iso(t: datetime | None) -> str | None:
    return None if t is None else t.astimezone(UTC).isoformat()


def json_line(record: dict[str, Any]) -> str:
    text = json.dumps(record, ensure_ascii=False)
    for raw, escaped in _JSON_BREAKS.items():
        if raw in text:  # only ever inside a string: JSON has no other place for them
            text = text.replace(raw, escaped)
    return text + "\n"


def write_jsonl(path: Path, records: Iterable[dict[str, Any]]) -> None:
    put(path, "".join(json_line(r) for r in records))


def write_csv(path: Path, header: list[str], rows: list[list[Any]]) -> None:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(
        [[inert_cell(one_line(c)) if isinstance(c, str) else c for c in row] for row in rows]
    )
    put(path, buf.getvalue())


def put(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))
