"""Log-likelihood agreement of the hf: backend with the embedded backend on the same run items.

Both run the same SmolLM2-135M-Instruct GGUF: embedded through llama.cpp (Q4_1 weights, 8-bit
activations), hf: through transformers (de-quantised float32 weights). Compares two finished run
directories of ``--mode loglikelihood`` on the same task and items::

    glotbench run -m embedded -t mm_eval.knowledge --mode loglikelihood --limit 20 -o runs/emb
    glotbench run -m hf:$DIR -M gguf_file=$GGUF -t mm_eval.knowledge --mode loglikelihood --limit 20 -o runs/hf
    PYTHONPATH=src python bench/hf_vs_embedded.py runs/emb runs/hf
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def option_logprobs(run_dir: Path) -> dict[tuple[str, str], list[float]]:
    out = {}
    for line in (Path(run_dir) / "samples.jsonl").read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if rec.get("status") == "scored":
            out[(rec["task"], rec["sample_id"])] = [o["logprob"] for o in rec["outputs"]]
    return out


def agreement(run_a: Path, run_b: Path) -> dict:
    a, b = option_logprobs(run_a), option_logprobs(run_b)
    common = sorted(set(a) & set(b))
    same = sum(max(range(len(a[k])), key=a[k].__getitem__) == max(range(len(b[k])), key=b[k].__getitem__)
               for k in common)
    diffs = [abs(x - y) for k in common for x, y in zip(a[k], b[k])]
    return {"items": len(common), "same_argmax": same, "options": len(diffs),
            "max_abs_diff": max(diffs) if diffs else None, "mean_abs_diff": sum(diffs) / len(diffs) if diffs else None}


if __name__ == "__main__":
    print(json.dumps(agreement(Path(sys.argv[1]), Path(sys.argv[2])), indent=1))
