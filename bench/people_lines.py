"""Build agent/baseline/people_lines.json: people's own lines from the LLMafia games, sorted by
the moment they fit, names turned into slots, for the baseline agent's line bank.

The LLMafia games are MIT-licensed (Niv Eckhaus, Uri Berger, Gabriel Stanovsky, "Time to
Talk", https://github.com/niveck/LLMafia); the file carries that attribution. Only games
0001-0010 are used, so the rest stay unseen by the agent and can check it.

A line is kept when it is short (at most 12 words), names nobody but the game's players (a
name it names becomes ``{x}``, a night victim ``{v}``), speaks of nothing outside the game
(AI, bots, prompts) and, when it names someone, reads to the baseline's own lexicon the way
its kind should (an accusation names ``{x}`` first and accuses; a question put to ``{x}`` is
one). Kinds: ``greet`` (day 1, first half minute, no name), ``open`` (a day's first third, no
name), ``filler`` (no name, at most 5 words), ``musing`` (no name, longer), ``late`` (no name,
the discussion's last quarter), ``accuse``, ``ask`` (a question put to ``{x}``), ``night_kill``
(naming the night's victim early in the day), ``defend`` (no name, denying).

    uv run python bench/people_lines.py [GAMES_DIR]
"""

from __future__ import annotations

import json
import re
import sys
from collections import defaultdict
from pathlib import Path

from agent.baseline.ledger import addressed
from agent.templates import read_line
from research.llmafia import read_games
from research.paths import llmafia_games_dir

OUT = Path(__file__).resolve().parents[1] / "agent" / "baseline" / "people_lines.json"
TRAIN = {f"{i:04d}" for i in range(1, 11)}
OFF_GAME = re.compile(
    r"\b(llms?|ai|bots?|gpt|chatgpt|prompts?|instructions?|robots?|agents?|models?|human|"
    r"humans|recipe|pancake|strawberry|game ?manager|python|code)\b",
    re.IGNORECASE,
)
GREET = re.compile(r"^(hi+|hello+|hey+|heya|yo|sup|good morning|morning|hi all|hello all|"
                   r"hi everyone|hello everyone|hey everyone|hi guys|hey guys|hello guys)[!. ]*$",
                   re.IGNORECASE)  # fmt: skip
DENY = re.compile(r"\b(not (the )?mafia|i'?m (a )?(bystander|innocent|town)|wasn'?t me|not me|"
                  r"i'?m not|im not)\b", re.IGNORECASE)  # fmt: skip
#: a claim of a role, or a person who is not at the table ("he", a typed-wrong name)
CLAIM = re.compile(r"\b(i am|i'?m|im) (the |a )?(mafia|detective|doctor)\b", re.IGNORECASE)
ELSEWHERE = re.compile(r"\b(he|she|him|her|his|hers|bitcoin|age|hat|codename)\b", re.IGNORECASE)
STRANGER = re.compile(r"(?<!^)(?<![.!?] )\b(?!I\b|I'|Im\b)[A-Z][a-z]+")
YOU = re.compile(r"\b(you|u|your|ur)\b", re.IGNORECASE)
KILL = re.compile(r"\b(rip|dead|died|killed|kill|murdered|gone|poor)\b", re.IGNORECASE)


def build(games_dir: Path) -> dict[str, list[str]]:
    bank: dict[str, list[str]] = defaultdict(list)
    for g in read_games(games_dir):
        if g.game_id not in TRAIN:
            continue
        names = [p.name for p in g.players]
        seat_of = {n.casefold(): i for i, n in enumerate(names)}
        name_re = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b", re.IGNORECASE)
        people = {p.name for p in g.players if not p.is_llm}
        victims = {e.phase: e.name for e in g.eliminations}
        for n, p in enumerate(g.phases):
            if p.kind != "day" or p.voting_start is None:
                continue
            talk = (p.voting_start - p.start).total_seconds()
            night = g.phases[n - 1].label if n else None
            victim = victims.get(night) if night else None
            for line in g.lines:
                if line.place != "stage" or line.speaker not in people:
                    continue
                t = (line.t - p.start).total_seconds()
                if not 0 <= t <= talk:
                    continue
                kind, text = classify(line.text, line.speaker, t, talk, p.number, victim,
                                      name_re, seat_of)  # fmt: skip
                if kind is not None and text not in bank[kind]:
                    bank[kind].append(text)
    return {k: sorted(v) for k, v in sorted(bank.items())}


def classify(
    raw: str,
    speaker: str,
    t: float,
    talk: float,
    day: int,
    victim: str | None,
    name_re: re.Pattern[str],
    seat_of: dict[str, int],
) -> tuple[str | None, str]:
    text = " ".join(raw.replace("{", "(").replace("}", ")").split())
    words = text.split()
    if not words or len(words) > 12 or OFF_GAME.search(text) or not re.search(r"[a-z]", text):
        return None, text
    if CLAIM.search(text) or ELSEWHERE.search(text) or STRANGER.search(name_re.sub("", text)):
        return None, text
    named = {m.casefold() for m in name_re.findall(text)}
    if speaker.casefold() in named:
        return None, text
    if not named:
        if day == 1 and t <= 30 and GREET.match(text):
            return "greet", text
        if DENY.search(text) and "?" not in text:
            return "defend", text
        if YOU.search(text) or ("?" in text and len(words) < 3):
            return None, text  # said to someone we can't see
        if t >= 0.75 * talk:
            return "late", text
        if t <= talk / 3 and day == 1:
            return "open", text
        return ("filler" if len(words) <= 5 else "musing"), text
    if len(named) != 1:
        return None, text
    name = next(iter(named))
    slot = "{v}" if victim is not None and name == victim.casefold() else "{x}"
    templ = name_re.sub(slot, text)
    if slot == "{v}":
        return ("night_kill" if KILL.search(text) and t <= talk / 2 else None), templ
    probe = templ.replace("{x}", "Xander")
    reading = read_line(probe, ("Xander", "Someone"))
    if addressed(probe, 1, {"xander": 0, "someone": 1}, {0, 1}) == 0:
        return "ask", templ
    if reading.pointed and reading.named[:1] == (0,) and reading.claim is None:
        return "accuse", templ
    return None, templ


def main() -> None:
    games = Path(sys.argv[1]) if len(sys.argv) > 1 else llmafia_games_dir()
    bank = build(games)
    doc = {
        "about": "People's lines from the LLMafia games 0001-0010, names as slots, by the "
        "moment they fit; built by bench/people_lines.py.",
        "source": "LLMafia (Eckhaus, Berger, Stanovsky: Time to Talk), "
        "https://github.com/niveck/LLMafia",
        "license": "MIT License, Copyright (c) the LLMafia authors; see the source repository",
        "lines": bank,
    }
    OUT.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print({k: len(v) for k, v in bank.items()}, "->", OUT)


if __name__ == "__main__":
    main()
