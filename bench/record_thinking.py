"""Record real reasoning traces from the embedded SmolLM2-135M-Instruct for the thinking analysis.

No reasoning model can be had offline here, so this prompts the embedded instruction model to
think first: the assistant turn is pre-filled with ``<think>\\n`` (the only text not written by
the model) and the model continues it, on the first N real HuMatchingFIB items with the
Hungarian prompt. The raw completions are written to tests/fixtures/thinking_responses_smollm2.jsonl
with their provenance; tests serve them back through the stub server and run
`glotbench analyze thinking` on the run.

    python bench/record_thinking.py [--items 8] [--max-tokens 160]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from glotbench.models.embedded import default_gguf_path  # noqa: E402
from glotbench.benchmarks.openhueval import matching_fib  # noqa: E402

SYSTEMS = {  # the same instruction in Hungarian and in English (the English one invites English reasoning)
    "hu": "Gondolkodj lépésről lépésre a <think> és </think> címkék között, majd a címke után add meg a választ a kért JSON formában.",
    "en": "Think step by step between <think> and </think> tags, then give the answer after the closing tag in the requested JSON format.",
}
PREFILL = "<think>\n"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=12)
    ap.add_argument("--max-tokens", type=int, default=160)
    ap.add_argument("--out", default=str(REPO / "tests" / "fixtures" / "thinking_responses_smollm2.jsonl"))
    a = ap.parse_args()
    import llama_cpp

    path = default_gguf_path()
    llm = llama_cpp.Llama(model_path=str(path), n_ctx=4096, seed=0, verbose=False)
    rows = []
    items = matching_fib.load()[: a.items]
    for k, rec in enumerate(items):
        system_lang = "hu" if k < len(items) // 2 else "en"
        user = matching_fib.build_prompt(rec, prompt_lang="hu")
        prompt = (f"<|im_start|>system\n{SYSTEMS[system_lang]}<|im_end|>\n<|im_start|>user\n{user}<|im_end|>\n"
                  f"<|im_start|>assistant\n{PREFILL}")
        out = llm.create_completion(prompt, max_tokens=a.max_tokens, temperature=0.0, top_k=1, repeat_penalty=1.1,
                                    stop=["<|im_end|>"])
        text = PREFILL + out["choices"][0]["text"]
        rows.append({
            "provenance": (f"recorded from SmolLM2-135M-Instruct ({path.name}, llama-cpp-python {llama_cpp.__version__}, "
                           f"greedy, max_tokens {a.max_tokens}) by bench/record_thinking.py; the assistant turn was "
                           f"pre-filled with {PREFILL!r}, everything after it is model output"),
            "qid": rec.get("qid"), "prompt_lang": "hu", "system_lang": system_lang, "options": str(list(rec["options"])), "response": text,
        })
        print(json.dumps(text[:160], ensure_ascii=False))
    Path(a.out).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    print(f"wrote {len(rows)} responses to {a.out}")


if __name__ == "__main__":
    from catalog_root import build_catalog

    build_catalog()
    main()
