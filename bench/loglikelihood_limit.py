"""Embedded model, ``--mode loglikelihood``: the request phase against llama.cpp's own limit, same run.

For each of ``--rounds`` rounds, interleaved:

1. llama.cpp's own prompt rate, now, through the low-level API on the embedded GGUF with the
   backend's thread count: one 512-token batch (``prompt_tok_s``).
2. ``glotbench run -m embedded -t TASK --mode loglikelihood --limit N`` (fresh output directory)
   for this checkout and, with ``--baseline-src``, another one (e.g. a checkout of main), in
   alternating order. Request phase = from the first request's start to the last answer, read from
   the run's journal (``created`` minus ``latency_s`` of the first answer; ``created`` of the last).
3. The tokens the run needs, from the journal's requests in answer order, split as the backend
   splits them (lm-eval's context/continuation rule): the context's tokens that the previous
   request's decoded sequence does not already hold as a prefix, plus, for a continuation of more
   than one token, its tokens but the last. A one-token option needs no token of its own: its
   log-prob is in the context's next-token row.
4. A replay: exactly those token chunks decoded through raw llama.cpp (KV of the shared prefix
   kept, logits for the last position only) -- an implementation with zero overhead.

    limit = tokens_needed / prompt_tok_s            (the bar: request phase <= 1.2 x limit)

The prompt rate is measured before the first run and after every run; each run's ratio uses the
mean of the rates measured just before and just after it (the load on a shared machine moves).

    python bench/loglikelihood_limit.py [--limit 40] [--rounds 2] [--baseline-src /tmp/base/src]

Also prints whether the two checkouts' per-option log-probs and predictions agree. The machine is
shared: compare ratios from one run, not absolute seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))


def prompt_rate(path: Path, threads: int) -> float:
    """llama.cpp's prompt-processing rate: one 512-token batch on a fresh context (tokens/s)."""
    import llama_cpp

    llm = llama_cpp.Llama(model_path=str(path), n_ctx=2048, n_threads=threads, n_threads_batch=threads,
                          n_batch=512, verbose=False)
    toks = (llm.tokenize(("Монгол хэлний үгсийн сан, дүрэм ба утга зүй. " * 80).encode(), add_bos=False) * 2)[:512]
    warm = toks[:8]
    _decode(llm, warm, 0, True)  # first decode allocates the compute graph: not part of the rate
    llm._ctx.kv_cache_seq_rm(-1, 0, -1)
    t0 = time.perf_counter()
    _decode(llm, toks, 0, True)
    rate = len(toks) / (time.perf_counter() - t0)
    llm.close()
    return rate


def _decode(llm, tokens: list[int], start: int, last_logits: bool) -> None:
    b = llm._batch.batch
    for pos in range(0, len(tokens), llm.n_batch):
        chunk = tokens[pos: pos + llm.n_batch]
        b.n_tokens = len(chunk)
        for i, tok in enumerate(chunk):
            b.token[i], b.pos[i], b.seq_id[i][0], b.n_seq_id[i] = tok, start + pos + i, 0, 1
            b.logits[i] = last_logits and pos + i == len(tokens) - 1
        llm._ctx.decode(llm._batch)


def needed_chunks(pairs: list[tuple[list[int], list[int]]]) -> list[tuple[int, list[int]]]:
    """(start position, tokens to decode) per request, with one KV sequence kept between requests."""
    prev: list[int] = []
    out = []
    for ctx, cont in pairs:
        seq = ctx + cont[:-1]  # positions whose logits are needed: len(ctx)-1 .. len(seq)-1
        common = 0
        for a, b in zip(prev, seq):
            if a != b:
                break
            common += 1
        if common == len(seq):  # already decoded (e.g. the other one-token options of this context)
            continue
        out.append((common, seq[common:]))
        prev = seq
    return out


def replay(path: Path, threads: int, chunks: list[tuple[int, list[int]]]) -> float:
    import llama_cpp

    llm = llama_cpp.Llama(model_path=str(path), n_ctx=2048, n_threads=threads, n_threads_batch=threads,
                          verbose=False)
    _decode(llm, chunks[0][1][:8], 0, True)  # warm-up, as in prompt_rate
    llm._ctx.kv_cache_seq_rm(-1, 0, -1)
    t0, cpu0 = time.perf_counter(), time.process_time()
    for start, toks in chunks:
        llm._ctx.kv_cache_seq_rm(-1, start, -1)
        _decode(llm, toks, start, True)
    dt, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    llm.close()
    return dt, cpu


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def run_cli(src: Path, task: str, limit: int, out: Path) -> dict:
    env = os.environ.copy()
    env["PYTHONPATH"] = str(src)
    t0, cpu0 = time.perf_counter(), _children_cpu()
    p = subprocess.run([sys.executable, "-m", "glotbench", "run", "-m", "embedded", "-t", task, "--mode",
                        "loglikelihood", "--limit", str(limit), "-o", str(out), "--no-progress"],
                       env=env, capture_output=True, text=True)
    wall, cpu = time.perf_counter() - t0, _children_cpu() - cpu0
    if p.returncode != 0:
        print(p.stderr[-3000:])
        raise SystemExit(f"run failed under {src}")
    con = sqlite3.connect(out / "journal.sqlite")
    rows = con.execute("SELECT request, response, latency_s, created FROM responses WHERE kind = 'loglikelihood' "
                       "ORDER BY created").fetchall()
    con.close()
    phase = rows[-1][3] - (rows[0][3] - rows[0][2])
    reqs = [json.loads(r[0]) for r in rows]
    lps = {(q["context"], q["continuation"]): json.loads(r[1])["logprob"] for q, r in zip(reqs, rows)}
    preds = {}
    for line in (out / "samples.jsonl").read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        preds[rec["sample_id"]] = rec.get("pred")
    return {"wall": wall, "cpu": cpu, "phase": phase, "requests": [(q["context"], q["continuation"]) for q in reqs],
            "logprobs": lps, "preds": preds}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", default="mm_eval.knowledge")
    ap.add_argument("--limit", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--baseline-src", default=None, help="src/ of another checkout (e.g. main) to run interleaved")
    a = ap.parse_args()
    from glotbench.models.embedded import default_gguf_path
    from glotbench.models.llamacpp import LlamaCppModel, default_threads

    gguf = default_gguf_path()
    threads = default_threads(batched=True)  # the embedded model's threads (batched by default: all cores)
    srcs = {"this": REPO / "src"}
    if a.baseline_src:
        srcs["baseline"] = Path(a.baseline_src).resolve()
    print(f"uptime: {os.popen('uptime').read().strip()}")
    tmp = Path(tempfile.mkdtemp(prefix="glotbench-ll-limit-"))
    rates, replays, runs = [prompt_rate(gguf, threads)], [], {k: [] for k in srcs}
    chunks = None
    for r in range(a.rounds):
        order = list(srcs) if r % 2 == 0 else list(reversed(srcs))
        for label in order:
            res = run_cli(srcs[label], a.task, a.limit, tmp / f"{label}-{r}")
            rates.append(prompt_rate(gguf, threads))
            res["rate"] = (rates[-2] + rates[-1]) / 2  # llama.cpp's rate just before and just after this run
            runs[label].append(res)
            print(f"round {r + 1}: {label:8s} request phase {res['phase']:6.2f} s (process {res['wall']:.1f} s, CPU {res['cpu']:.1f} s); "
                  f"llama.cpp prompt rate around it {res['rate']:.0f} tok/s", flush=True)
        if chunks is None:
            tok = LlamaCppModel(gguf, n_ctx=2048, n_threads=1)
            pairs = [tok.encode_pair(c, x) for c, x in runs["this"][0]["requests"]]
            all_tokens = sum(len(c) + len(x) for c, x in pairs)
            chunks = needed_chunks(pairs)
            tok._llm.close()
            needed = sum(len(t) for _, t in chunks)
        replays.append(replay(gguf, threads, chunks))
        rates.append(prompt_rate(gguf, threads))
        print(f"round {r + 1}: replay of the needed chunks through llama.cpp {replays[-1][0]:.2f} s "
              f"(= {needed / replays[-1][0]:.0f} tok/s), CPU {replays[-1][1]:.2f} s", flush=True)
    rate = statistics.median(rates)
    print(f"\nllama.cpp prompt rate ({threads} thread(s), 512-token batch): median {rate:.0f} tok/s, measured "
          f"{len(rates)} times between the runs: " + ", ".join(f"{x:.0f}" for x in rates))
    print(f"tokens: {all_tokens} in the {len(pairs)} requests (context + continuation), {needed} needed "
          f"({len(chunks)} decodes: new context tokens, and the continuation but its last token when it has "
          f"more than one)")
    print(f"limit = tokens_needed / prompt_rate = {needed} / {rate:.0f} = {needed / rate:.2f} s (median rate); "
          f"per run: the rate measured just before and after it")
    for label, rs in runs.items():
        ratios = [x["phase"] / (needed / x["rate"]) for x in rs]
        print(f"{label:8s} request phase / limit per run: " + ", ".join(f"{x:.2f}" for x in ratios)
              + f"; median {statistics.median(ratios):.2f}x (bar <= 1.2); phases "
              + ", ".join(f"{x['phase']:.2f}" for x in rs) + " s")
        print(f"{'':8s} CPU seconds of the whole process (start-up and model load included): "
              + ", ".join(f"{x['cpu']:.2f}" for x in rs) + "; the replay's CPU: "
              + ", ".join(f"{x[1]:.2f}" for x in replays))
    if "baseline" in runs:
        this, base = runs["this"][0], runs["baseline"][0]
        keys = this["logprobs"].keys() & base["logprobs"].keys()
        diff = max(abs(this["logprobs"][k] - base["logprobs"][k]) for k in keys)
        same = sum(this["preds"][s] == base["preds"].get(s) for s in this["preds"])
        rel = [b["phase"] / t["phase"] for t, b in zip(runs["this"], runs["baseline"])]
        print(f"baseline / this request phase per round: {', '.join(f'{x:.2f}' for x in rel)}; per-option log-probs: {len(keys)} compared, "
              f"max |diff| {diff:.2e} nats; predictions identical on {same}/{len(this['preds'])} items")
    print(f"uptime: {os.popen('uptime').read().strip()}")


if __name__ == "__main__":
    from catalog_root import build_catalog

    build_catalog()
    main()
