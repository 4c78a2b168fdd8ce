"""`mafiabot report`'s report.md: the report's figures as Markdown tables, the paper's beside ours.

`research.report.build_report` computes the figures; this only lays them out (Tables 1-5,
Figures 4-7 by the file names `research.report_plots` gave them).
"""

from __future__ import annotations

from typing import Any

from bot.players.spotrate import table_lines
from research.report_night import night_markdown
from research.report_paper import PAPER, RATINGS, TYPES

__all__ = ["render_markdown"]


def _f(x: Any, digits: int = 2) -> str:
    if x is None:
        return "–"
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    return str(x)


def _ms(s: dict[str, Any] | None, digits: int = 2) -> str:
    if not s or s.get("mean") is None:
        return "–"
    return f"{s['mean']:.{digits}f} (± {s['std']:.{digits}f})"


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


def render_markdown(report: dict[str, Any], figures: dict[str, str] | None = None) -> str:
    """The report as Markdown: Tables 1-5 with the paper's values beside ours, Figures 4-7."""
    figures = figures or {}
    paper = PAPER
    t1 = report["table1"]
    out: list[str] = ["# Mafia games: human and agent players", ""]
    out.append(
        f"{report['games']} games ({', '.join(f'{v} {k}' for k, v in report['sources'].items())}"
        f"): {', '.join(report['game_ids'])}."
    )
    out += ["", *[f"- {n}" for n in report["notes"]], ""]

    out += ["## Table 1. Games", ""]
    out += ["| | here | paper (21 games) |", "|---|---|---|"]
    out.append(f"| games | {report['games']} | {paper['games']} |")
    out.append(
        f"| phases per game | {_f(t1['phases_per_game']['mean'])} | {paper['phases_per_game']} |"
    )
    pp = t1["players_per_game"]
    out.append(
        f"| players per game | {_ms(pp)}, {pp['min']}–{pp['max']} | {paper['players_per_game']} |"
    )
    out.append(
        f"| all lines per game, Game-Manager's included (what the paper counted) "
        f"| {_f(t1['lines_per_game_with_game_manager']['mean'])} | {paper['messages_per_game']} |"
    )
    out.append(f"| player messages per game | {_f(t1['messages_per_game']['mean'])} | – |")
    out.append(
        f"| agent messages per game | {_f(t1['agent_messages_per_game']['mean'])} "
        f"| {paper['agent_messages_per_game']} |"
    )
    out.append(
        f"| lines in total, Game-Manager's included; agent's | {report['all_lines']}; "
        f"{report['agent_messages']} | 2558; 211 |"
    )
    out.append(f"| player messages in total | {report['messages']} | – |")

    out += ["", "## Table 2. Messages per player per day phase", ""]
    out += ["| player | mean (± std) | pairs (day, player) | paper |", "|---|---|---|---|"]
    for k in TYPES:
        s = report["messages_per_player_per_day_phase"][k]
        out.append(
            f"| {k} | {_ms(s)} | {s['n']} | {_ms(paper['messages_per_player_per_day_phase'][k])} |"
        )

    out += ["", "## Table 3. Message content (per player per game, then across players)", ""]
    out += [
        "| player | words per message | repeated messages | unique words | players |",
        "|---|---|---|---|---|",
    ]
    for k in TYPES:
        out.append(
            f"| {k} | {_ms(report['words_per_message'][k])} | "
            f"{_ms(report['repeated_messages'][k])} | {_ms(report['unique_words'][k])} | "
            f"{report['words_per_message'][k]['n']} |"
        )
        out.append(
            f"| {k} (paper) | {_ms(paper['words_per_message'][k])} | "
            f"{_ms(paper['repeated_messages'][k])} | {_ms(paper['unique_words'][k])} | |"
        )

    out += ["", "## Table 4. Separability of messages (LDA on sentence embeddings)", ""]
    sep = report.get("separability")
    if not sep:
        out.append("Not computed (no embedder given).")
    else:
        out.append(f"Embedder: {sep['embedder']}; {sep['classifier']}; {sep['folds']}-fold CV.")
        out += [
            "",
            "| classes | lines (positive) | F1 in-sample (as the paper) | F1 cross-validated "
            "| paper (BGE-M3, in-sample) |",
            "|---|---|---|---|---|",
        ]
        for key, label in (
            ("agent_vs_human", "agent / human"),
            ("mafia_vs_bystander", "mafia / bystander"),
            ("day_vs_night", "day / night"),
        ):
            r = sep[key]
            ins, cv = r.get("in_sample"), r.get("cross_validated")
            out.append(
                f"| {label} | {r['n']} ({r['positive']}) | "
                f"{_f(ins and ins['f1_weighted'])} (positive {_f(ins and ins['f1_positive'])}) | "
                f"{_f(cv and cv['f1_weighted'])} (positive {_f(cv and cv['f1_positive'])}) | "
                f"{paper['separability_f1'][key]} |"
            )
        out.append("")
        out.append(
            "F1 is the support-weighted F1 over both classes; 'positive' is the F1 of the "
            "first-named class."
        )

    sv = report["survey"]
    out += ["", "## Table 5. Post-game survey about the agent", ""]
    scales = ", ".join(f"{v} on {k}" for k, v in sv["by_scale"].items())
    out.append(
        f"{sv['responses']} answers ({scales})."
        f" Agent identified correctly: {_pct(sv['identified_rate'])} of {sv['identified_n']} "
        f"answers that asked (paper: {_pct(paper['survey']['identified_rate'])})."
    )
    out += [
        "",
        "| metric | mean (± std), 0-100 ÷ 20 (study's conversion) | n | 0-100 → 1 + 4v/100 "
        "| 1-5 answers only | paper |",
        "|---|---|---|---|---|---|",
    ]
    for k in RATINGS:
        out.append(
            f"| {k} | {_ms(sv[k])} | {sv[k]['n']} | {_ms(sv['linear'][k])} | "
            f"{_ms(sv['only_1_5_answers'][k])} | {_ms(paper['survey'][k])} |"
        )

    spot = report.get("spot_the_ai")
    if spot:
        out += ["", "## Spot-the-AI rate", ""]
        out.append(
            "Share of survey answers to 'who was the AI?' that named an agent, with the 95% "
            "Wilson interval; chance is what a random guess among the other players gives "
            "(agents / (N - 1) per answer, averaged over the answers); games where fewer than "
            f"2 people answered are counted. Paper: {_pct(paper['survey']['identified_rate'])}."
        )
        out += ["", *table_lines(spot)]
        if "spot_the_ai" in figures:
            out += ["", f"![Spot-the-AI rate]({figures['spot_the_ai']})"]

    tm = report["timing"]
    out += ["", "## Figure 5. Timing (seconds)", ""]
    out += [
        "| measure | human: per line | agent: per line | human: player means "
        "| agent: player means |",
        "|---|---|---|---|---|",
    ]
    for key, name in (
        ("since_previous_message", "time since previous message (anyone's)"),
        ("since_own_previous_message", "time between a player's messages (bug-fixed)"),
        ("since_own_previous_message_study_bug", "same, study's buggy variant"),
    ):
        m = tm[key]
        cells = [f"{_ms(m['per_message'][k], 1)}, n={m['per_message'][k]['n']}" for k in TYPES] + [
            f"{_ms(m['per_player_mean'][k], 1)}, n={m['per_player_mean'][k]['n']}" for k in TYPES
        ]
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    out.append("")
    out.append(
        "Bug-fixed: each line is measured from the same player's previous line in the same "
        "phase (the first from the phase start). The study's script instead subtracted the time "
        "of the phase's k-th line (opening announcement first) from a player's k-th line."
    )
    if "figure5" in figures:
        out += ["", f"![Figure 5]({figures['figure5']})"]

    out += ["", "## Figure 4. Messages per player by day", ""]
    out += [
        "| day | games | alive (mean) | lines per alive player | human | agent |",
        "|---|---|---|---|---|---|",
    ]
    for d in report["messages_per_player_by_day"]:
        out.append(
            f"| {d['day']} | {d['games']} | {_f(d['alive_mean'])} | {_ms(d['per_player'])} | "
            f"{_ms(d['human'])} | {_ms(d['agent'])} |"
        )
    if "figure4" in figures:
        out += ["", f"![Figure 4]({figures['figure4']})"]

    out += ["", "## Figure 6. Win rates", ""]
    out += ["| player | as mafia | as bystander |", "|---|---|---|"]
    for k in TYPES:
        c = report["win_counts"][k]
        out.append(
            f"| {k} | {_pct(report['win_rate'][k]['mafia'])} ({c['mafia']['won']}/"
            f"{c['mafia']['n']}) | {_pct(report['win_rate'][k]['bystander'])} "
            f"({c['bystander']['won']}/{c['bystander']['n']}) |"
        )
    if report["games_without_winner"]:
        out.append(f"\nLeft out (no winner): {', '.join(report['games_without_winner'])}.")
    if report.get("draws"):
        out.append(f"Of them, draws (nobody out for days in a row): {', '.join(report['draws'])}.")
    if "figure6" in figures:
        out += ["", f"![Figure 6]({figures['figure6']})"]

    vr = report["voted_out_rank"]
    out += ["", "## Figure 7. Talkativeness rank of players voted out by day", ""]
    out.append(
        f"{vr['n']} day eliminations; the most talkative player of the day was voted out in "
        f"{_pct(vr['most_talkative_share'])} of them. Rank 1 = most messages that day (ties "
        "share their mean rank); normalised rank 1 = most talkative."
    )
    out += ["", "| rank | times voted out |", "|---|---|"]
    for rank, n in vr["rank_counts"].items():
        out.append(f"| {rank} | {n} |")
    if "figure7" in figures:
        out += ["", f"![Figure 7]({figures['figure7']})"]
    out.append("")
    night = night_markdown(report.get("night_actions") or {})
    if night:
        out += night
    return "\n".join(out)
