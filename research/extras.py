"""The research commands' own dependencies (the ``research`` extra: matplotlib, scikit-learn).

A running bot needs none of them, so the container image and ``uv sync --no-dev`` leave them
out. A research command started without them says in one line what to install instead of
failing with an ImportError half-way through.
"""

from __future__ import annotations

import importlib.util

#: what each research command imports, by module name (package name for the message)
NEEDS: dict[str, dict[str, str]] = {
    "report": {"matplotlib": "matplotlib"},
    "likeness": {"sklearn": "scikit-learn"},
}

INSTALL = (
    "install the research extra: `uv sync --extra research` in a checkout (`make play` and "
    "`make test` already do), `pip install 'mafiabot[research]'`, or for the container image "
    "`docker build --build-arg MAFIABOT_EXTRAS=research .`"
)


class ResearchExtraMissing(RuntimeError):
    pass


def missing(command: str) -> list[str]:
    """The packages ``command`` needs that are not installed."""
    return [
        package
        for module, package in NEEDS.get(command, {}).items()
        if importlib.util.find_spec(module) is None
    ]


def require(command: str) -> None:
    """Raise :class:`ResearchExtraMissing` (one line: what to install) if ``command`` cannot run."""
    absent = missing(command)
    if absent:
        raise ResearchExtraMissing(f"needs {' and '.join(absent)} (not installed): {INSTALL}.")
