"""Per-game figures of LLMafia's own, unmodified analysis code, as JSON on standard output.

Runs in LLMafia's environment (Python 3.12 with numpy, matplotlib and scikit-learn), from a
folder holding ``games/`` (the analysis's ``DIRS_PREFIX``, "./games"), with the vendored
analysis files (``tests/vendor/llmafia``) importable. For each game folder ``main()`` of
analyze.py would take (its own filter: a numeric name without "00001"), it calls
``analyze.get_single_game_results`` and the per-game steps of ``main()`` that need no
downloaded embedding model (timing differences, content metrics), and prints what they found.
A game the analysis cannot load is reported with its error instead.

With ``--main`` it then runs analyze.py's own ``main()`` over the whole folder (plots into
./analysis), less its embedding step (``analyze_embeddings`` downloads a sentence-embedding
model), and reports what it printed under ``"main"``.
"""

import contextlib
import io
import json
import math
import os
import sys
import traceback
from collections import Counter
from pathlib import Path
from typing import Any

os.environ.setdefault("MPLBACKEND", "Agg")
sys.path.insert(0, str(Path(__file__).resolve().parent / "llmafia"))

import analyze
from game_constants import DIRS_PREFIX


def _number(x: Any) -> float | None:
    x = float(x)
    return None if math.isnan(x) else round(x, 6)


def figures(game_id: str) -> dict[str, Any]:
    (
        llm,
        players,
        mafia,
        humans,
        _config,
        metrics,
        comments,
        phases,
        llm_voted_out,
        llm_mafia,
        mafia_won,
        llm_won,
    ) = analyze.get_single_game_results(game_id)
    said = [m for phase in phases for m in phase.messages if not m.is_manager]
    manager = [m for phase in phases for m in phase.messages if m.is_manager]
    out: dict[str, Any] = {
        "llm": llm,
        "players": players,
        "mafia": mafia,
        "humans": humans,
        "survey": {k: sorted(v) for k, v in metrics.items()},
        "comments": len(comments),
        "phases": [
            ["day" if p.is_daytime else "night", len(p.active_players), p.voted_out_player]
            for p in phases
        ],
        "votes": sum(m.manager_message_type == analyze.WHO_VOTE_FOR for m in manager),
        "messages": dict(sorted(Counter(m.name for m in said).items())),
        "llm_messages": sum(m.is_llm for m in said),
        "words": dict(sorted(_words(said).items())),
        "was_llm_voted_out": llm_voted_out,
        "is_llm_mafia": llm_mafia,
        "did_mafia_win": mafia_won,
        "did_llm_win": llm_won,
    }
    timings: list[list[float]] = [[], [], [], []]
    analyze.calc_game_mean_timing_diffs(phases, humans, *timings)
    out["timing_means"] = [[_number(x) for x in t] for t in timings]
    human_content: dict[str, list[float]] = {m: [] for m in analyze.CONTENT_METRICS}
    llm_content: dict[str, list[float]] = {m: [] for m in analyze.CONTENT_METRICS}
    analyze.calc_mean_message_content_empiric_metrics(phases, humans, human_content, llm_content)
    out["content"] = {
        "human": {k: [_number(x) for x in v] for k, v in human_content.items()},
        "llm": {k: [_number(x) for x in v] for k, v in llm_content.items()},
    }
    return out


def _words(said: list[Any]) -> Counter[str]:
    words: Counter[str] = Counter()
    for m in said:
        words[m.name] += m.num_words
    return words


def main() -> None:
    result: dict[str, Any] = {}
    for game_dir in sorted(Path(DIRS_PREFIX).glob("*")):
        game_id = game_dir.name
        if not (game_dir.is_dir() and game_id.isdigit() and "00001" not in game_id):
            continue
        try:
            result[game_id] = figures(game_id)
        except Exception as e:  # reported, so the test can say what stopped the analysis
            tail = traceback.format_exc().strip().splitlines()[-3:]
            result[game_id] = {"error": f"{type(e).__name__}: {e}", "trace": tail}
    if "--main" in sys.argv[1:]:
        Path(analyze.ANALYSIS_DIR).mkdir(exist_ok=True)
        analyze.analyze_embeddings = lambda *args, **kwargs: None  # needs a downloaded model
        printed = io.StringIO()
        try:
            with contextlib.redirect_stdout(printed):
                analyze.main()
            result["main"] = {"printed": printed.getvalue().splitlines()}
        except Exception as e:
            tail = traceback.format_exc().strip().splitlines()[-3:]
            result["main"] = {"error": f"{type(e).__name__}: {e}", "trace": tail}
    json.dump(result, sys.stdout, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
