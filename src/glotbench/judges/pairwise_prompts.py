"""The pairwise judge prompt, one per language: a question and two answers, which is better.

The verdict format is MT-Bench's (Zheng et al. 2023, "Judging LLM-as-a-Judge"): the judge explains
briefly, then writes ``[[A]]`` (the first answer is better), ``[[B]]`` (the second) or ``[[C]]``
(a tie). The wording is glotbench's own; every language's prompt says the same thing and keeps the
same three tokens, so one reply parser (:mod:`glotbench.judges.pairwise_verdict`) reads them all.

:data:`PROMPTS` holds English (the default) and the languages glotbench has native prompts for:
Hungarian, Czech, Chinese. A task in any other language (Mongolian, for one) is judged with the
English prompt; :func:`pairwise_prompt` says when it fell back. A new language is one more entry.

The question and the answers are put in with one pass over the template, so an answer that
contains ``{answer_b}`` is left as it is.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from functools import cached_property

_SLOTS = re.compile(r"\{(question|answer_a|answer_b)\}")


@dataclass(frozen=True)
class PairwisePrompt:
    language: str  # the prompt's own language
    system: str
    user: str  # with {question}, {answer_a}, {answer_b}

    @cached_property
    def version(self) -> str:
        """Short hash of the prompt (shown in the summary: another wording, another version)."""
        return hashlib.sha256(json.dumps([self.system, self.user], ensure_ascii=False).encode()).hexdigest()[:12]

    def render(self, question: str, answer_a: str, answer_b: str) -> list[dict[str, str]]:
        """Chat messages for the judge: the system turn, then the question and the two answers
        (``answer_a`` in the first position)."""
        values = {"question": str(question), "answer_a": str(answer_a), "answer_b": str(answer_b)}
        user = _SLOTS.sub(lambda m: values[m.group(1)], self.user)
        return [{"role": "system", "content": self.system}, {"role": "user", "content": user}]


PROMPTS: dict[str, PairwisePrompt] = {
    "en": PairwisePrompt(
        language="en",
        system=(
            "You are an impartial judge. Compare the two assistants' answers to the user's question below and "
            "decide which answer is better: which one follows the user's instructions and answers the question "
            "more correctly and more helpfully. Consider accuracy, relevance, helpfulness and level of detail. "
            "The order in which the answers are shown must not influence your decision, nor must their length "
            "or the assistants' names. First compare the two answers in a short explanation. Then give your "
            "final verdict in exactly this format: [[A]] if assistant A's answer is better, [[B]] if assistant "
            "B's answer is better, [[C]] for a tie."
        ),
        user=(
            "[Question]\n{question}\n\n"
            "[Assistant A's answer]\n{answer_a}\n[End of assistant A's answer]\n\n"
            "[Assistant B's answer]\n{answer_b}\n[End of assistant B's answer]"
        ),
    ),
    "hu": PairwisePrompt(
        language="hu",
        system=(
            "Pártatlan bíráló vagy. Hasonlítsd össze a két asszisztens válaszát az alábbi felhasználói kérdésre, "
            "és döntsd el, melyik válasz a jobb: melyik követi jobban a felhasználó utasításait, és melyik "
            "válaszol helyesebben és hasznosabban a kérdésre. Vedd figyelembe a pontosságot, a relevanciát, a "
            "hasznosságot és a részletességet. A válaszok sorrendje nem befolyásolhatja a döntésedet, ahogy a "
            "hosszuk és az asszisztensek neve sem. Először egy rövid indoklásban hasonlítsd össze a két választ. "
            "Ezután add meg a végső ítéletedet pontosan ebben a formában: [[A]], ha az A asszisztens válasza "
            "jobb, [[B]], ha a B asszisztens válasza jobb, [[C]], ha döntetlen."
        ),
        user=(
            "[Kérdés]\n{question}\n\n"
            "[Az A asszisztens válasza]\n{answer_a}\n[Az A asszisztens válaszának vége]\n\n"
            "[A B asszisztens válasza]\n{answer_b}\n[A B asszisztens válaszának vége]"
        ),
    ),
    "cs": PairwisePrompt(
        language="cs",
        system=(
            "Jsi nestranný hodnotitel. Porovnej odpovědi dvou asistentů na níže uvedenou otázku uživatele a "
            "rozhodni, která odpověď je lepší: která lépe dodržuje pokyny uživatele a odpovídá na otázku "
            "správněji a užitečněji. Zohledni přesnost, relevanci, užitečnost a míru podrobnosti. Pořadí, v "
            "jakém jsou odpovědi uvedeny, nesmí ovlivnit tvé rozhodnutí, stejně jako jejich délka nebo jména "
            "asistentů. Nejprve obě odpovědi krátce porovnej. Poté uveď svůj konečný verdikt přesně v tomto "
            "formátu: [[A]], pokud je lepší odpověď asistenta A, [[B]], pokud je lepší odpověď asistenta B, "
            "[[C]] při remíze."
        ),
        user=(
            "[Otázka]\n{question}\n\n"
            "[Odpověď asistenta A]\n{answer_a}\n[Konec odpovědi asistenta A]\n\n"
            "[Odpověď asistenta B]\n{answer_b}\n[Konec odpovědi asistenta B]"
        ),
    ),
    "zh": PairwisePrompt(
        language="zh",
        system=(
            "你是一名公正的评审。请比较两位助手对下面用户问题的回答，判断哪个回答更好：哪个更好地遵循了用户的指示，"
            "并且更准确、更有帮助地回答了问题。请考虑准确性、相关性、有用性和详细程度。回答的呈现顺序不得影响你的判断，"
            "回答的长度和助手的名称也不得影响你的判断。请先用简短的说明比较这两个回答，然后严格按照以下格式给出最终裁决："
            "如果助手A的回答更好，输出[[A]]；如果助手B的回答更好，输出[[B]]；如果两者相当，输出[[C]]。"
        ),
        user=(
            "[问题]\n{question}\n\n"
            "[助手A的回答开始]\n{answer_a}\n[助手A的回答结束]\n\n"
            "[助手B的回答开始]\n{answer_b}\n[助手B的回答结束]"
        ),
    ),
}

DEFAULT_LANGUAGE = "en"


def pairwise_prompt(language: str | None) -> tuple[PairwisePrompt, bool]:
    """``(prompt, fell_back)``: the prompt in the task's language (an ISO 639-1 code, or an alias
    a language pack knows: ``hun``, ``ces``...), else the English one with ``fell_back`` True."""
    code = (language or "").strip().lower().replace("_", "-").split("-")[0]
    if code and code not in PROMPTS:
        from glotbench.languages import get_pack
        from glotbench.languages.pack import LanguagePackError

        try:
            code = get_pack(code).code
        except LanguagePackError:  # a language without a pack: English, said so by fell_back
            pass
    if code in PROMPTS:
        return PROMPTS[code], False
    return PROMPTS[DEFAULT_LANGUAGE], True
