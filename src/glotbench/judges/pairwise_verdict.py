"""Reading a pairwise judge's reply, and combining the two position-swapped verdicts of an item.

:func:`parse_pairwise_reply` reads MT-Bench's ``[[A]]`` / ``[[B]]`` / ``[[C]]`` (tie) and keeps what
MT-Bench's own reader would read beside it (``mt_bench``); :func:`combine` maps the two orders back to
the runs as MT-Bench's pairwise summary does. Both rules, with the table of outcomes:
docs/pairwise.md "Reading a verdict".
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from glotbench.extract.thinking import strip_thinking

FIRST, SECOND, TIE, UNREADABLE = "A", "B", "tie", "unreadable"
WIN, LOSS = "win", "loss"
_TOKEN = re.compile(r"\[\[\s*([ABCabc])\s*\]\]")
_CHOICE = {"A": FIRST, "B": SECOND, "C": TIE}


@dataclass(frozen=True)
class PairVerdict:
    choice: str  # "A" (first answer better), "B" (second), "tie", or "unreadable"
    reason: str  # how it was read, or why it could not be
    mt_bench: str  # what MT-Bench's reader makes of the same reply: "A", "B", "tie" or "error"

    def to_dict(self) -> dict:
        return asdict(self)


def _mt_bench_reading(text: str) -> str:
    for token, choice in (("[[A]]", FIRST), ("[[B]]", SECOND), ("[[C]]", TIE)):
        if token in text:
            return choice
    return "error"


def parse_pairwise_reply(text: str | None) -> PairVerdict:
    raw = text if isinstance(text, str) else ""
    body = strip_thinking(raw)[0]
    found = list(dict.fromkeys(_CHOICE[m.group(1).upper()] for m in _TOKEN.finditer(body)))
    if not found:
        return PairVerdict(UNREADABLE, "no [[A]]/[[B]]/[[C]] verdict in the reply", _mt_bench_reading(raw))
    if len(found) > 1:
        return PairVerdict(UNREADABLE, f"several verdicts ({', '.join(found)}): the reply names more than one",
                           _mt_bench_reading(raw))
    return PairVerdict(found[0], f"verdict {found[0]}", _mt_bench_reading(raw))


def _for_x(choice: str, x_first: bool) -> str:
    """A verdict read from run X's side: win, loss or tie."""
    if choice == TIE:
        return TIE
    return WIN if (choice == FIRST) == x_first else LOSS


def combine(x_first: str, y_first: str) -> str:
    """The item's outcome for run X: ``win``, ``loss``, ``tie`` or ``unreadable``.

    ``x_first``: the verdict (A/B/tie/unreadable) when X's answer was shown first; ``y_first``: when
    Y's was. See the module docstring for the rule."""
    if UNREADABLE in (x_first, y_first):
        return UNREADABLE
    g1, g2 = _for_x(x_first, True), _for_x(y_first, False)
    if g1 == TIE or g1 != g2:
        return TIE
    return g1


def kind_of(x_first: str, y_first: str) -> str:
    """How the two verdicts relate (for the counts beside win/tie/loss): ``consistent`` (the same
    winner, or a tie, in both orders), ``flip`` (each order favours the answer in the same
    position: a position-biased verdict), ``half_tie`` (a winner in one order, a tie in the other)
    or ``unreadable``."""
    if UNREADABLE in (x_first, y_first):
        return UNREADABLE
    g1, g2 = _for_x(x_first, True), _for_x(y_first, False)
    if g1 == g2:
        return "consistent"
    return "half_tie" if TIE in (g1, g2) else "flip"
