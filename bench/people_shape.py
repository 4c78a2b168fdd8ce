"""People's line lengths and reading+typing pace in the LLMafia games, the tables of
agent/shape.py (printed; paste them there when the games change).

- **chars**: characters per stage line of people (games 0001-0010, the rest held out),
  percentiles 0, 2.5, ..., 100 (41 points, so the tail is drawn finely).
- **pace**: for each line that names a person, the seconds until that person's next stage
  line (at most 60 s), divided by the characters of the two lines (what they read plus what
  they typed): seconds per character, percentiles 0, 5, ..., 100.

    uv run python bench/people_shape.py [GAMES_DIR]
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np

from research.llmafia import read_games


def main(folder: Path) -> None:
    games = [g for g in read_games(folder) if int(g.game_id) <= 10]
    chars: list[int] = []
    pace: list[float] = []
    for g in games:
        people = {p.name for p in g.players if not p.is_llm}
        lines = [x for x in g.lines if x.place == "stage"]
        chars += [len(" ".join(x.text.split())) for x in lines if x.speaker in people]
        for i, x in enumerate(lines):
            for p in people:
                if p == x.speaker or not re.search(rf"\b{re.escape(p)}\b", x.text, re.I):
                    continue
                answer = next((y for y in lines[i + 1 :] if y.speaker == p), None)
                if answer is None:
                    continue
                dt = (answer.t - x.t).total_seconds()
                if 0 < dt <= 60:
                    pace.append(dt / (len(x.text) + len(answer.text)))
    q41 = np.percentile(chars, np.linspace(0, 100, 41))
    q21 = np.percentile(pace, np.linspace(0, 100, 21))
    print(f"{len(chars)} lines; chars percentiles (0, 2.5, ..., 100):")
    print("(" + ", ".join(f"{v:.0f}" for v in q41) + ")")
    print(f"{len(pace)} answers; seconds per character percentiles (0, 5, ..., 100):")
    print("(" + ", ".join(f"{v:.3f}" for v in q21) + ")")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/data/llmafia"))
