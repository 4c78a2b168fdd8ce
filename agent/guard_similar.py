"""The part of the disclosure guard that generalises past its word lists: likeness, by character
n-grams, to a bank of disclosing lines in many languages, weighed against a bank of ordinary
table talk (accusations about "the bot" among it).

A line is folded (:func:`agent.guard_text.fold`), cut into character 3- and 4-grams (words
padded with a space, so a word's start and end count), weighted by how rare each n-gram is in the
banks (idf) and compared by cosine with every example. The line is flagged when its nearest
disclosing example is at least :data:`THRESHOLD` alike and nearer than its nearest ordinary
example by :data:`MARGIN`. Character n-grams need no tokeniser and no model: they work the same
for Chinese, Japanese and Hebrew as for English, and catch a phrasing the patterns lack when it
shares enough of its pieces with an example ("soy solo un programa" near "solo soy un programa
de ordenador"). The threshold and margin were tuned on the corpora ``bench/guard.py`` measures:
disclosing lines written apart from the bank, and people's lines of the LLMafia games.

The banks are data files beside this module (``agent/guard_data``), one example a line.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from functools import cache
from importlib import resources

from agent.guard_text import fold

__all__ = [
    "ANCHOR",
    "MARGIN",
    "MIN_CHARS",
    "MIN_CHARS_CJK",
    "THRESHOLD",
    "Bank",
    "bank",
    "similarity",
]

THRESHOLD = 0.42
MARGIN = 0.06
#: shorter lines are not compared: a word or two is alike to everything ("yes", "mafia")
MIN_CHARS = 14
MIN_CHARS_CJK = 6
_SIZES = (3, 4)
#: a line is compared only when it has a word of this family in it: what a model says about itself
#: (what it is, what it lacks, that it is sorry and can't); other lines are table talk
ANCHOR = re.compile(
    r"(?<![a-z])(?:ai|ia|ki|a\.i|bot|robo|model|modelo|modele|modell|program|code|codigo|"
    r"codice|software|logiciel|machine|maschine|macchina|maquina|assist|neural|neuron|intelligen|"
    r"human|humano|humain|umano|mensch|mens|person|pessoa|personne|persoon|experienc|experien|"
    r"erfahrung|esperienz|ervaring|sorry|leid|desole|siento|desculp|dispiace|spijt|unable|"
    r"cannot|can't|llm|gpt|train|entren|trein|addestr|getrain)"
    r"|ии|бот|робот|модел|программ|код|человек|опыт|нейро|интеллект|извин|сожален"
    r"|人工|机器|機器|模型|程序|程式|代码|代碼|人类|人類|经历|經歷|抱歉|无法|無法"
    r"|ボット|ロボット|モデル|プログラム|コード|人間|経験|申し訳|できません|ai"
    r"|בוט|רובוט|מודל|תוכנה|קוד|אדם|חוויות|מצטער|בינה"
)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def grams(folded: str) -> Counter[str]:
    """Character n-grams of a folded line, words padded with a space."""
    text = " " + " ".join(folded.split()) + " "
    out: Counter[str] = Counter()
    for n in _SIZES:
        out.update(text[i : i + n] for i in range(len(text) - n + 1))
    return out


@dataclass(frozen=True)
class Bank:
    """Examples as unit vectors, with an inverted index from n-gram to (example, weight)."""

    labels: tuple[bool, ...]  # True: disclosing
    texts: tuple[str, ...]
    idf: dict[str, float]
    default_idf: float
    index: dict[str, tuple[tuple[int, float], ...]]

    @classmethod
    def build(cls, positive: list[str], negative: list[str]) -> Bank:
        texts = [*positive, *negative]
        labels = tuple([True] * len(positive) + [False] * len(negative))
        counted = [grams(fold(t)) for t in texts]
        df: Counter[str] = Counter()
        for c in counted:
            df.update(c.keys())
        n = len(texts)
        idf = {g: math.log((1 + n) / (1 + d)) + 1.0 for g, d in df.items()}
        default = math.log(1 + n) + 1.0
        postings: dict[str, list[tuple[int, float]]] = {}
        for i, c in enumerate(counted):
            vec = {g: (1 + math.log(k)) * idf[g] for g, k in c.items()}
            norm = math.sqrt(sum(v * v for v in vec.values())) or 1.0
            for g, v in vec.items():
                postings.setdefault(g, []).append((i, v / norm))
        index = {g: tuple(p) for g, p in postings.items()}
        return cls(labels, tuple(texts), idf, default, index)

    def nearest(self, text: str) -> tuple[float, float, int]:
        """(best likeness to a disclosing example, to an ordinary one, the disclosing one's
        index) for a line (folded here)."""
        c = grams(fold(text))
        if not c:
            return 0.0, 0.0, -1
        vec = {g: (1 + math.log(k)) * self.idf.get(g, self.default_idf) for g, k in c.items()}
        norm = math.sqrt(sum(v * v for v in vec.values())) or 1.0
        scores = [0.0] * len(self.labels)
        index = self.index
        for g, v in vec.items():
            posting = index.get(g)
            if posting is None:
                continue
            w = v / norm
            for i, x in posting:
                scores[i] += w * x
        pos = neg = 0.0
        best = -1
        for i, s in enumerate(scores):
            if self.labels[i]:
                if s > pos:
                    pos, best = s, i
            elif s > neg:
                neg = s
        return pos, neg, best


def _read(name: str) -> list[str]:
    text = resources.files("agent.guard_data").joinpath(name).read_text("utf-8")
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            out.append(line)
    return out


@cache
def bank() -> Bank:
    """The bank from the data files (built once per process)."""
    return Bank.build(_read("disclosing.txt"), _read("ordinary.txt"))


def similarity(text: str) -> tuple[bool, float, str]:
    """Whether ``text`` is like a disclosing example (see the module doc), its likeness, and
    the example."""
    folded = fold(text)
    letters = "".join(folded.split())
    if len(letters) < (MIN_CHARS_CJK if _CJK.search(letters) else MIN_CHARS):
        return False, 0.0, ""
    if not ANCHOR.search(folded):
        return False, 0.0, ""
    b = bank()
    pos, neg, best = b.nearest(text)
    flagged = pos >= THRESHOLD and pos >= neg + MARGIN
    return flagged, pos, b.texts[best] if best >= 0 else ""
