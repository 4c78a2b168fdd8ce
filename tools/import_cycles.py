"""Import circles between the project's own modules; exit 1 if there is any.

Every import statement counts: also those under ``TYPE_CHECKING`` and those inside functions,
since a circle that only typing closes still ties the modules together for a reader.

    python tools/import_cycles.py                # bot, agent, games (and research/ if present)
    python tools/import_cycles.py bot agent      # only these packages

Prints one line per circle (its modules, sorted), then a summary line. Run by ``make check``.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

DEFAULT_ROOTS = ("bot", "agent", "games", "research", "mafiabot")


def modules(roots: list[Path]) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` under ``roots`` (named from their parent)."""
    found: dict[str, Path] = {}
    for root in roots:
        for f in sorted(root.rglob("*.py")):
            parts = list(f.relative_to(root.parent).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = f
    return found


def import_graph(mods: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the project modules it imports (a package's own ``__init__`` left out)."""

    def resolve(name: str) -> str | None:
        while name:
            if name in mods:
                return name
            name = name.rpartition(".")[0]
        return None

    graph: dict[str, set[str]] = {m: set() for m in mods}
    for m, f in mods.items():
        pkg = m if f.name == "__init__.py" else m.rpartition(".")[0]
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = pkg.split(".")
                    up = up[: len(up) - (node.level - 1)] if node.level > 1 else up
                    base = ".".join(up + ([base] if base else []))
                names = [base] + [f"{base}.{a.name}" for a in node.names]
            for n in names:
                t = resolve(n)
                if t and t != m and not m.startswith(t + "."):
                    graph[m].add(t)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, list[str]]] = [(start, sorted(graph[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on.add(start)
        while work:
            v, todo = work[-1]
            if todo:
                w = todo.pop()
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, sorted(graph[w])))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
            if low[v] == index[v]:
                comp: list[str] = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return sorted(found)


def main(argv: list[str]) -> int:
    names = argv or [r for r in DEFAULT_ROOTS if Path(r).is_dir()]
    roots = [Path(r) for r in names if Path(r).is_dir()]
    if len(roots) != len(names):
        print(f"not a directory: {' '.join(n for n in names if not Path(n).is_dir())}")
        return 2
    mods = modules(roots)
    found = circles(import_graph(mods))
    for comp in found:
        print("circle:", " ".join(comp))
    print(f"{len(mods)} modules, {len(found)} circle(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
