"""Swiss-system selection of the best ``k`` of ``n`` candidates by pairwise judgments (OpenHuEval App. B.3).

The paper's rules: a Swiss system instead of a knockout (a candidate is not eliminated by one lost
comparison), candidates compared several times per round, a share eliminated per round. It gives
no pairing rule and its judge picks 2 of 5. Here, pairwise (as issue 15 asks), with the usual
Swiss rules made explicit:

* rounds: ``ceil(log2(n))`` (enough for one unbeaten candidate), unless given;
* pairing: candidates ordered by score (wins; a draw is 0.5), ties by their order in the input;
  the first unpaired candidate meets the next unpaired one it has not met yet (else the next one);
  with an odd number, the lowest-ordered candidate that has had no bye sits out and scores 1;
* a judgment is "A", "B" (the better one) or None (no readable verdict: a draw);
* the best ``k``: by score, then Buchholz (the sum of the opponents' final scores), then input order.

The judge is any callable taking a round's pairs and returning a verdict per pair, so the procedure is tested with a
deterministic judge; the CLI's judge is a model through the journal (:func:`judge_prompt`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Callable

# The judge of one round: ``[(a, b), ...] -> ["A" | "B" | None, ...]`` (all pairs of a round at once,
# so a model judge can answer them concurrently).
RoundJudge = Callable[[list[tuple[dict, dict]]], list]

CRITERIA = ("linguistic complexity, relevance to the language and its culture, common-sense accuracy, "
            "context-dependence, answer diversity, ambiguity, reasoning requirements, socio-ethical "
            "considerations, format diversity, and breadth of knowledge")

PROMPT = """You are selecting high-quality questions for a benchmark. Compare the two questions below on these criteria: {criteria}.

Question A: {a}

Question B: {b}

Which question is better? Explain briefly, then end with one line: "BETTER: A" or "BETTER: B"."""

_BETTER = re.compile(r"better\s*[:：]?\s*\**\s*\[?\s*([AB])\b", re.I)


def judge_prompt(a: str, b: str) -> str:
    return PROMPT.replace("{criteria}", CRITERIA).replace("{a}", a).replace("{b}", b)


def parse_better(reply: str) -> str | None:
    found = _BETTER.findall(reply or "")
    return found[-1].upper() if found else None


@dataclass
class Entry:
    idx: int
    item: dict
    score: float = 0.0
    opponents: list[int] = field(default_factory=list)
    bye: bool = False


def rounds_for(n: int) -> int:
    return max(1, math.ceil(math.log2(n))) if n > 1 else 0


def pair_round(entries: list[Entry]) -> tuple[list[tuple[Entry, Entry]], Entry | None]:
    order = sorted(entries, key=lambda e: (-e.score, e.idx))
    bye = None
    if len(order) % 2:
        bye = next((e for e in reversed(order) if not e.bye), order[-1])
        order = [e for e in order if e is not bye]
    pairs, free = [], list(order)
    while free:
        a = free.pop(0)
        j = next((i for i, e in enumerate(free) if e.idx not in a.opponents), 0)
        pairs.append((a, free.pop(j)))
    return pairs, bye


def swiss(items: list[dict], k: int, judge: RoundJudge, rounds: int | None = None,
          on_round: Callable[[int, list[tuple[int, int]]], None] | None = None) -> tuple[list[dict], list[dict]]:
    """``(selected, rest)``: each item gets ``swiss`` = score, Buchholz, rank, opponents, rounds."""
    entries = [Entry(i, it) for i, it in enumerate(items)]
    n_rounds = rounds if rounds is not None else rounds_for(len(items))
    if len(items) <= k:
        n_rounds = 0
    for r in range(n_rounds):
        pairs, bye = pair_round(entries)
        if on_round:
            on_round(r + 1, [(a.idx, b.idx) for a, b in pairs])
        if bye is not None:
            bye.bye, bye.score = True, bye.score + 1
        verdicts = judge([(a.item, b.item) for a, b in pairs]) if pairs else []
        for (a, b), win in zip(pairs, verdicts):
            a.opponents.append(b.idx)
            b.opponents.append(a.idx)
            if win == "A":
                a.score += 1
            elif win == "B":
                b.score += 1
            else:
                a.score += 0.5
                b.score += 0.5
    by_idx = {e.idx: e for e in entries}
    buch = {e.idx: sum(by_idx[o].score for o in e.opponents) for e in entries}
    ranked = sorted(entries, key=lambda e: (-e.score, -buch[e.idx], e.idx))
    for rank, e in enumerate(ranked, 1):
        e.item["swiss"] = {"score": e.score, "buchholz": buch[e.idx], "rank": rank, "rounds": n_rounds,
                           "opponents": [str(by_idx[o].item.get("id", o)) for o in e.opponents], "bye": e.bye}
    return [e.item for e in ranked[:k]], [e.item for e in ranked[k:]]


# ---------------------------------------------------------------- the paper's "2 of 5" rounds
# OpenHuEval App. B.3 as printed: the judge picks the 2 best of 5 questions at a time, a Swiss
# system (scores carry over, a loss does not eliminate), and 65% of the questions are eliminated per
# round. Made explicit here: each round orders the candidates still in by score (ties: input
# order) and cuts them into consecutive batches of ``batch``; the judge's picks score 1 each (a reply
# with no readable picks gives every member pick/size); a last batch no bigger than ``pick``
# scores 1 each as a bye. Then the lowest-scored ``eliminate`` share goes (never below k). Rounds
# go on until k or fewer are left (or ``max_rounds``). The best k: the last ones left, by score.

BatchJudge = Callable[[list[list[dict]]], list]  # batches -> per batch the picked positions (0-based) or None

BATCH_PROMPT = """You are selecting high-quality questions for a benchmark. Compare the {n} questions below on these criteria: {criteria}.

{questions}

Select the {pick} best questions. Explain briefly, then end with one line of JSON: {{"best": [numbers of the {pick} best questions]}}"""


def batch_prompt(questions: list[str], pick: int) -> str:
    listed = "\n\n".join(f"Question {i}: {q}" for i, q in enumerate(questions, 1))
    return BATCH_PROMPT.format(n=len(questions), criteria=CRITERIA, questions=listed, pick=pick)


def parse_best(reply: str, n: int, pick: int) -> list[int] | None:
    """The picked positions (0-based) from ``{"best": [1, 3]}`` (1-based numbers), else None."""
    found = re.findall(r"\"?best\"?\s*[:：]\s*\[([^\]]*)\]", reply or "", re.I)
    if not found:
        return None
    nums = []
    for x in re.findall(r"\d+", found[-1]):
        i = int(x) - 1
        if 0 <= i < n and i not in nums:
            nums.append(i)
    return nums[:pick] or None


def swiss_batches(items: list[dict], k: int, judge: BatchJudge, *, batch: int = 5, pick: int = 2,
                  eliminate: float = 0.65, max_rounds: int = 50,
                  on_round: Callable[[int, list[list[int]]], None] | None = None) -> tuple[list[dict], list[dict]]:
    entries = [Entry(i, it) for i, it in enumerate(items)]
    active = list(entries)
    out_round: dict[int, int] = {}
    r = 0
    while len(active) > k and r < max_rounds:
        r += 1
        order = sorted(active, key=lambda e: (-e.score, e.idx))
        groups = [order[i:i + batch] for i in range(0, len(order), batch)]
        judged = [g for g in groups if len(g) > pick]
        for g in groups:
            if len(g) <= pick:
                for e in g:
                    e.bye, e.score = True, e.score + 1
        if on_round:
            on_round(r, [[e.idx for e in g] for g in groups])
        picks = judge([[e.item for e in g] for g in judged]) if judged else []
        for g, chosen in zip(judged, picks):
            for e in g:
                e.opponents += [o.idx for o in g if o is not e]
            if chosen:
                for i in chosen:
                    g[i].score += 1
            else:
                for e in g:
                    e.score += pick / len(g)
        if eliminate > 0:
            keep = max(k, math.ceil(len(active) * (1 - eliminate)))
            ranked = sorted(active, key=lambda e: (-e.score, e.idx))
            for e in ranked[keep:]:
                out_round[e.idx] = r
            active = ranked[:keep]
    by_idx = {e.idx: e for e in entries}
    buch = {e.idx: sum(by_idx[o].score for o in e.opponents) for e in entries}
    # still in first, then by the round they left (later is better), then score, Buchholz, order
    ranked = sorted(entries, key=lambda e: (e.idx in out_round, -out_round.get(e.idx, 0), -e.score, -buch[e.idx], e.idx))
    for rank, e in enumerate(ranked, 1):
        e.item["swiss"] = {"score": e.score, "buchholz": buch[e.idx], "rank": rank, "rounds": r, "batch": batch,
                           "pick": pick, "eliminated_in_round": out_round.get(e.idx),
                           "opponents": [str(by_idx[o].item.get("id", o)) for o in dict.fromkeys(e.opponents)], "bye": e.bye}
    return [e.item for e in ranked[:k]], [e.item for e in ranked[k:]]
