"""PNG figures for the report, drawn only from the report's numbers (so the JSON, the Markdown
and the pictures cannot disagree). Agg backend: no display needed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
from matplotlib.axes import Axes

COLORS = {"human": "tab:blue", "agent": "tab:red"}
TYPES = ("human", "agent")


def plot_all(report: dict[str, Any], out: Path) -> dict[str, Path]:
    """Figures 4-7 (and the buggy-variant comparison) into ``out``; name -> path."""
    return {
        "figure4": _figure4(report, out / "figure4_messages_per_player_by_day.png"),
        "figure5": _figure5(report, out / "figure5_timing.png"),
        "figure6": _figure6(report, out / "figure6_win_rates.png"),
        "figure7": _figure7(report, out / "figure7_voted_out_rank.png"),
        **(
            {"spot_the_ai": _spot(report["spot_the_ai"], out / "spot_the_ai.png")}
            if report.get("spot_the_ai")
            else {}
        ),
    }


def _spot(spot: dict[str, Any], path: Path) -> Path:
    """Spot-the-AI rate per group with its 95% interval, and the chance level of each."""
    rows = [("overall", spot["overall"])]
    rows += [(f"server: {r['label']}", r) for r in spot["by_server"]]
    rows += [(f"setup: {r['label']}", r) for r in spot["by_setup"]]
    rows = [(label, r) for label, r in rows if r["answers"]]
    fig, ax = plt.subplots(figsize=(9, 0.9 + 0.45 * max(1, len(rows))))
    for y, (_label, r) in enumerate(rows):
        lo, hi = r["ci95"]
        ax.errorbar(
            [r["rate"]],
            [y],
            xerr=[[max(0.0, r["rate"] - lo)], [max(0.0, hi - r["rate"])]],
            fmt="o",
            color="tab:red",
            capsize=4,
            label="named an AI (95% CI)" if y == 0 else None,
        )
        chance = "chance" if y == 0 else None
        ax.plot([r["chance"]], [y], "|", color="black", markersize=14, label=chance)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([f"{label[:48]} (n={r['answers']})" for label, r in rows])
    ax.invert_yaxis()
    ax.set_xlim(-0.02, 1.02)
    ax.set_xlabel("share of answers naming an AI player")
    if rows:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8)
    return _save(fig, path)


def _save(fig: Any, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _figure4(report: dict[str, Any], path: Path) -> Path:
    rows = report["messages_per_player_by_day"]
    fig, ax = plt.subplots(figsize=(6, 4))
    days = [r["day"] for r in rows]
    means = [r["per_player"]["mean"] or 0.0 for r in rows]
    stds = [r["per_player"]["std"] or 0.0 for r in rows]
    ax.fill_between(
        days,
        [m - s for m, s in zip(means, stds, strict=True)],
        [m + s for m, s in zip(means, stds, strict=True)],
        alpha=0.25,
        color="tab:gray",
        label="all players, mean ± std over games",
    )
    ax.plot(days, means, color="black", marker="o", label="all players")
    for k in TYPES:
        pts = [(r["day"], r[k]["mean"]) for r in rows if r[k]["mean"] is not None]
        if pts:
            ax.plot(*zip(*pts, strict=True), color=COLORS[k], marker=".", ls="--", label=k)
    ax.set_xlabel("day phase")
    ax.set_ylabel("messages per alive player")
    ax.set_xticks(days)
    ax.set_ylim(bottom=0)
    if rows:
        ax.legend(fontsize=8)
    ax.set_title("Figure 4: messages per player by day phase")
    return _save(fig, path)


def _bars(ax: Axes, measure: dict[str, Any], title: str) -> None:
    drawn = False
    for k in TYPES:
        h = measure[k]
        if not h["n"]:
            continue
        edges, counts = h["edges"], [*h["counts"], h["over"]]
        width = edges[1] - edges[0]
        total = sum(counts)
        xs = [*edges[:-1], edges[-1]]
        ax.bar(
            xs,
            [c / total for c in counts],
            width=width,
            align="edge",
            alpha=0.5,
            color=COLORS[k],
            label=f"{k} (mean {h['mean']:.1f}, sd {h['std']:.1f}, n={h['n']})",
        )
        drawn = True
    ax.set_title(title, fontsize=9)
    ax.set_xlabel("seconds (last bar: at or above the range)", fontsize=8)
    ax.set_ylabel("share", fontsize=8)
    if drawn:
        ax.legend(fontsize=7)


def _figure5(report: dict[str, Any], path: Path) -> Path:
    t = report["timing"]
    fig, axes = plt.subplots(2, 3, figsize=(14, 7))
    panels = (
        ("since_previous_message", "since previous message (anyone's)"),
        ("since_own_previous_message", "between a player's messages (bug-fixed)"),
        ("since_own_previous_message_study_bug", "between a player's messages: study's bug"),
    )
    for col, (key, title) in enumerate(panels):
        _bars(axes[0][col], t[key]["per_player_mean"], f"player means: {title}")
        _bars(axes[1][col], t[key]["per_message"], f"every line: {title}")
    fig.suptitle("Figure 5: message timing, human and agent players")
    return _save(fig, path)


def _figure6(report: dict[str, Any], path: Path) -> Path:
    fig, ax = plt.subplots(figsize=(6, 3))
    labels, values, colors, notes = [], [], [], []
    for role in ("bystander", "mafia"):
        for k in TYPES:
            c = report["win_counts"][k][role]
            labels.append(f"{k} as {role}")
            values.append(c["won"] / c["n"] if c["n"] else 0.0)
            colors.append(COLORS[k])
            notes.append(f"{c['won']}/{c['n']}")
    ys = list(range(len(labels)))
    ax.barh(ys, [1.0] * len(ys), color="lightgray")
    ax.barh(ys, values, color=colors)
    for y, v, note in zip(ys, values, notes, strict=True):
        ax.text(1.01, y, f"{100 * v:.0f}% ({note})", va="center", fontsize=8)
    ax.set_yticks(ys, labels)
    ax.set_xlim(0, 1.25)
    ax.set_xlabel("share of players whose team won")
    ax.set_title("Figure 6: win rates")
    return _save(fig, path)


def _figure7(report: dict[str, Any], path: Path) -> Path:
    h = report["voted_out_rank"]["normalized"]
    fig, ax = plt.subplots(figsize=(6, 4))
    edges = h["edges"]
    ax.bar(edges[:-1], h["counts"], width=edges[1] - edges[0], align="edge", alpha=0.7)
    ax.set_xlabel("normalised talkativeness rank in the day (1 = most messages)")
    ax.set_ylabel("players voted out")
    ax.set_title(f"Figure 7: who gets voted out (n={report['voted_out_rank']['n']})")
    return _save(fig, path)
