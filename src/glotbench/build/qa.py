"""`build qa`: one short factual question-answer pair per passage, by any model.

The prompt follows Chinese SimpleQA's generation prompt (Fig. 18: the criteria "objective fact",
"one undisputed entity as the answer, no ambiguity", "answer does not change over time",
"somewhat challenging", a JSON reply ``{"question", "answer"}``, one worked example, "let's
start") and HuSimpleQA's (App. C.3: questions from the entry, in the entry's language), written in
the passage's language (Czech and English templates; Chinese gets the paper's own Fig. 18 prompt
verbatim, :mod:`glotbench.build.prompts_zh`; other languages get the English template told to
write in that language). Parsing is forgiving (a JSON object anywhere in the reply, else
``Question:``/``Answer:`` lines in any of the template languages); a reply it cannot read, an empty
field, or an answer longer than ``max_answer_words`` is a dropped item with the reason, never a crash.
"""

from __future__ import annotations

import json
import re

from glotbench.build.calls import Call, chat
from glotbench.models.base import GenRequest

LANG_NAMES = {"cs": "Czech", "en": "English", "hu": "Hungarian", "sk": "Slovak", "de": "German", "pl": "Polish",
              "zh": "Chinese", "mn": "Mongolian"}

PROMPTS = {
    "cs": """Vytvoř podle daného dokumentu jednu faktickou otázku a její správnou odpověď. Musí splňovat tyto požadavky:

1. Otázka se musí týkat objektivních znalostí o světě, např. „Kdo získal Nobelovu cenu za fyziku v roce 2024?“. Nepokládej subjektivní otázky na názor nebo pocity, např. „Co si myslíte o ...?“.
2. Otázka musí mít jedinou jasnou a nespornou odpověď (jednu entitu) a nesmí být nijak vágní ani dvojznačná. Nepokládej např. „Kde se setkali Barack a Michelle Obamovi?“, protože není jasné, které setkání se myslí.
3. Odpověď se nesmí měnit s časem. Např. „Kdo je současný prezident USA?“ není vhodná otázka.
4. Otázka má být přiměřeně náročná.
5. Odpověď musí vyplývat z dokumentu a otázka musí být česky.

Vrať otázku a odpověď ve formátu JSON:
{"question": "sem napiš otázku", "answer": "sem napiš správnou odpověď"}

### Příklad ###

Název: Karlův most
Dokument: Karlův most je nejstarší stojící most přes Vltavu v Praze. Jeho stavba začala roku 1357 za vlády Karla IV. a byla dokončena na počátku 15. století.

Výsledek: {"question": "V kterém roce byla zahájena stavba Karlova mostu v Praze?", "answer": "1357"}

###

Název: {title}
Dokument: {text}

Pojďme na to! Výsledek:""",
    "en": """Based on the given document, write one factual question and its correct answer. They must meet these requirements:

1. The question must be about objective knowledge of the world, e.g. "Who won the 2024 Nobel Prize in Physics?". Do not ask subjective questions about opinions or feelings, such as "What do you think of ...?".
2. The question must have exactly one clear, undisputed entity as its answer and must not be vague or ambiguous in any way. Do not ask e.g. "Where did Barack and Michelle Obama meet?", because it is unclear which meeting is meant.
3. The answer must not change over time. E.g. "Who is the current president of the United States?" is not a suitable question.
4. The question should be reasonably challenging.
5. The answer must follow from the document, and the question and answer must be written in {language}.

Return the question and answer as JSON:
{"question": "the question here", "answer": "the correct answer here"}

### Example ###

Title: Charles Bridge
Document: Charles Bridge is the oldest standing bridge over the Vltava in Prague. Its construction began in 1357 under Charles IV and was finished at the beginning of the 15th century.

Result: {"question": "In which year did the construction of Charles Bridge in Prague begin?", "answer": "1357"}

###

Title: {title}
Document: {text}

Let's start! Result:""",
}

# the format line's placeholders ({"question": "sem napiš otázku", ...}): a small model copies them
PLACEHOLDERS = {"sem napiš otázku", "sem napiš správnou odpověď", "the question here", "the correct answer here",
                "这里填写生成的问题", "这里填写对应的标准答案"}

_LABELS_Q = r"(?:question|otázka|otazka|kérdés|frage|pytanie|otázka|问题|q)"
_LABELS_A = r"(?:answer|odpověď|odpoved|válasz|antwort|odpowiedź|答案|a)"
_LINE_Q = re.compile(rf"^\W*{_LABELS_Q}\W*[:：]\s*(.+)$", re.I | re.M)
_LINE_A = re.compile(rf"^\W*{_LABELS_A}\W*[:：]\s*(.+)$", re.I | re.M)


# `--format lines`: for small or base models that cannot follow the JSON instruction. Two plain
# completions per passage, both journaled: the question (one-shot example, the passage, "Otázka:";
# stops at the line's end), then the answer (the same text, the question, "Odpověď:").
LINES = {
    "cs": ("Dokument: Karlův most je nejstarší stojící most přes Vltavu v Praze. Jeho stavba začala roku 1357 za vlády Karla IV.\n"
           "Otázka: V kterém roce začala stavba Karlova mostu?\nOdpověď: 1357\n\n", "Dokument", "Otázka", "Odpověď"),
    "en": ("Document: Charles Bridge is the oldest standing bridge over the Vltava in Prague. Its construction began in 1357 "
           "under Charles IV.\nQuestion: In which year did the construction of Charles Bridge begin?\nAnswer: 1357\n\n",
           "Document", "Question", "Answer"),
}


def lines_question_call(passage: dict, language: str, max_chars: int = 800) -> Call:
    ex, doc, q, _ = LINES.get(language, LINES["en"])
    prompt = f"{ex}{doc}: {passage['text'][:max_chars]}\n{q}:"
    return Call(passage["id"], GenRequest(prompt=prompt, max_tokens=48, temperature=0.0, stop=("\n",)))


def lines_answer_call(question_call: Call, question: str, language: str) -> Call:
    _, _, _, a = LINES.get(language, LINES["en"])
    prompt = f"{question_call.request.prompt} {question.strip()}\n{a}:"
    return Call(question_call.item + "#answer", GenRequest(prompt=prompt, max_tokens=24, temperature=0.0, stop=("\n",)))


def prompt_for(passage: dict, language: str) -> str:
    if language == "zh":  # the paper's own prompt (Fig. 18), verbatim
        from glotbench.build.prompts_zh import CSQA_FIG18, INPUT

        category = str(passage.get("category") or passage.get("title") or "-")
        return CSQA_FIG18 + INPUT.replace("{category}", category).replace("{text}", passage["text"])
    tpl = PROMPTS.get(language, PROMPTS["en"])
    return (tpl.replace("{language}", LANG_NAMES.get(language, language))
            .replace("{title}", passage.get("title") or "-").replace("{text}", passage["text"]))


def qa_calls(passages: list[dict], language: str, max_tokens: int = 200) -> list[Call]:
    return [Call(p["id"], chat(prompt_for(p, language), max_tokens=max_tokens)) for p in passages]


def _json_objects(text: str):
    dec = json.JSONDecoder()
    for m in re.finditer(r"\{", text):
        try:
            obj, _ = dec.raw_decode(text[m.start():])
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            yield obj


def parse_qa(reply: str) -> tuple[str, str] | str:
    """``(question, answer)`` from a model's reply, or a string saying why it cannot be read."""
    text = re.sub(r"<think>.*?</think>", "", reply or "", flags=re.S).strip()
    if not text:
        return "empty reply"
    for obj in _json_objects(text):
        q, a = obj.get("question"), obj.get("answer")
        if isinstance(q, str) and isinstance(a, (str, int, float)) and not isinstance(a, bool):
            return q.strip(), str(a).strip()
    q, a = _LINE_Q.search(text), _LINE_A.search(text)
    if q and a:
        return q.group(1).strip().strip('"'), a.group(1).strip().strip('"')
    return "no JSON {question, answer} and no Question:/Answer: lines in the reply"


def check_pair(question: str, answer: str, max_answer_words: int) -> str | None:
    """Why a parsed pair is not a short factual QA item, or None."""
    if not question:
        return "empty question"
    if not answer:
        return "empty answer"
    if question in PLACEHOLDERS or answer in PLACEHOLDERS:
        return "the reply repeats the prompt's format placeholder, not a question"
    if len(answer.split()) > max_answer_words:
        return f"answer has {len(answer.split())} words (more than {max_answer_words}: not a short answer)"
    if answer.casefold() in question.casefold():
        return "the answer is written in the question"
    return None
