"""People's line lengths, endings and reading+typing pace in the LLMafia games, the tables of
agent/shape.py (printed; paste them there when the games change).

- **chars**: characters per stage line of people (all games), percentiles 0, 2.5, ..., 90,
  and the tail above the 90th: the Hill estimate of its Pareto exponent, with what that tail
  predicts against what people wrote (the share of lines past the 95th and 99th percentile,
  the longest line); then the agent's own target lengths (100,000 draws) beside people's.
- **endings**: the share of people's stage lines ending in "?", "!", ".", "..." or no mark.
- **pace** (games 0001-0010, the rest held out): for each line that names a person, the
  seconds until that person's next stage line (at most 60 s), divided by the characters of the
  two lines (what they read plus what they typed): seconds per character, percentiles 0, 5,
  ..., 100.

    uv run python bench/people_shape.py [GAMES_DIR]
"""

from __future__ import annotations

import random
import re
import sys
from collections import Counter
from pathlib import Path

import numpy as np

from agent.shape import TAIL_ALPHA, TAIL_FROM, ending_of, target_chars
from research.llmafia import read_games
from research.paths import llmafia_games_dir


def main(folder: Path) -> None:
    games = read_games(folder)
    chars: list[int] = []
    pace: list[float] = []
    ends: Counter[str] = Counter()
    for g in games:
        people = {p.name for p in g.players if not p.is_llm}
        lines = [x for x in g.lines if x.place == "stage"]
        chars += [len(" ".join(x.text.split())) for x in lines if x.speaker in people]
        ends.update(ending_of(x.text) for x in lines if x.speaker in people)
        for i, x in enumerate(lines if int(g.game_id) <= 10 else ()):
            for p in people:
                if p == x.speaker or not re.search(rf"\b{re.escape(p)}\b", x.text, re.I):
                    continue
                answer = next((y for y in lines[i + 1 :] if y.speaker == p), None)
                if answer is None:
                    continue
                dt = (answer.t - x.t).total_seconds()
                if 0 < dt <= 60:
                    pace.append(dt / (len(x.text) + len(answer.text)))
    q37 = np.percentile(chars, np.linspace(0, 100 * TAIL_FROM, 37))
    q21 = np.percentile(pace, np.linspace(0, 100, 21))
    print(f"{len(chars)} lines; chars percentiles (0, 2.5, ..., {100 * TAIL_FROM:.0f}):")
    print("(" + ", ".join(f"{v:.3g}" for v in q37) + ")")
    start = float(q37[-1])
    top = np.array([c for c in chars if c > start], dtype=float)
    alpha = len(top) / float(np.sum(np.log(top / start)))
    print(f"tail above {start:.0f} chars: {len(top)} lines, Hill alpha {alpha:.2f} "
          f"(agent.shape.TAIL_ALPHA = {TAIL_ALPHA})")  # fmt: skip
    rng = random.Random(0)
    drawn = [target_chars(rng) for _ in range(100_000)]
    qs = (25, 50, 75, 90, 95, 99, 99.9)
    print("quantile   " + " ".join(f"{q:>6}" for q in qs) + "    max")
    for who, xs in (("people", chars), ("agent", drawn)):
        row = " ".join(f"{v:6.0f}" for v in np.percentile(xs, qs))
        print(f"{who:<10} {row} {max(xs):6d}")
    print(f"endings of {len(chars)} lines: " + ", ".join(
        f"{mark or 'none'} {ends[mark] / len(chars):.3f}" for mark in ("", "?", "!", ".", "...")
    ))  # fmt: skip
    print(f"{len(pace)} answers; seconds per character percentiles (0, 5, ..., 100):")
    print("(" + ", ".join(f"{v:.3f}" for v in q21) + ")")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else llmafia_games_dir())
