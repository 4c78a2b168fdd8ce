"""`.env.example` is where an operator meets the settings (issue 33, item 6): every variable
docs/limits-and-secrets.md tells an operator to set is there (commented out when it has no
safe default; never with a real value)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VARIABLE = re.compile(r"\bMAFIABOT_[A-Z0-9_]+\b")


def example() -> str:
    return (ROOT / ".env.example").read_text(encoding="utf-8")


def test_every_variable_of_the_limits_and_secrets_page_is_in_env_example() -> None:
    documented = set(VARIABLE.findall((ROOT / "docs" / "limits-and-secrets.md").read_text()))
    assert "MAFIABOT_SECRET_KEY" in documented
    listed = set(VARIABLE.findall(example()))
    assert sorted(documented - listed) == []


def test_the_secret_key_is_explained_and_has_no_value() -> None:
    lines = example().splitlines()
    at = next(i for i, line in enumerate(lines) if "MAFIABOT_SECRET_KEY" in line)
    assert lines[at].strip() == "# MAFIABOT_SECRET_KEY="  # commented out, empty
    assert lines[at - 1].startswith("#") and "secret.key" in " ".join(lines[at - 2 : at])
