"""Throughput of glotbench, measured side by side with lm-evaluation-harness in one run.

(a) Against a real llama.cpp server (llama-cpp-python[server], SmolLM2-135M-Instruct GGUF on
    loopback): the same N generative multiple-choice items (MM-Eval knowledge, the same chat
    prompts, greedy, the same max tokens) through glotbench's OpenAI-compatible backend and
    through lm-eval's `local-chat-completions`, each at its best concurrency; prints items/s and
    the ratio glotbench / lm-eval.
(b) Pure harness overhead: items/s against an instant local OpenAI-compatible stub server
    (glotbench.testing.stub_openai), glotbench alone and lm-eval for reference.

    python bench/throughput.py [--items 200] [--overhead-items 1500] [--skip-lm-eval]

Each glotbench pass uses a fresh run directory, so nothing comes from its cache. Times are wall
clock of the in-process evaluate call (after imports) for both harnesses.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from glotbench.engine.config import RunConfig  # noqa: E402
from glotbench.engine.session import run_evaluation  # noqa: E402
from glotbench.models.embedded import default_gguf_path  # noqa: E402
from glotbench.tasks.registry import all_specs, make_task  # noqa: E402
from glotbench.testing.servers import free_port, start_stub, stop, wait_http  # noqa: E402

SYSTEM = "You are an AI assistant proficient in Mongolian."
MAX_TOKENS = 16


def bench_task_yaml(tmp: Path, source_task: str = "mm_eval.knowledge") -> Path:
    """A copy of the task with plain greedy decoding, so both harnesses send the same request."""
    spec, path = all_specs()[source_task]
    d = spec.model_dump(exclude_defaults=False)
    d["name"] = "bench.mc"
    d["suites"] = []
    d["generation"] = {"max_tokens": MAX_TOKENS, "temperature": 0.0, "top_p": None, "stop": [], "extra": {}}
    from glotbench.paths import resolve_data_file

    d["dataset"]["splits"] = {k: str(resolve_data_file(v)) for k, v in d["dataset"]["splits"].items()}
    out = tmp / "bench_mc.yaml"
    out.write_text(yaml.safe_dump(d, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return out


def lm_eval_task(tmp: Path, task_yaml: Path, n: int) -> Path:
    """The same items and user messages as an lm-eval task (generate_until)."""
    from glotbench.tasks.registry import resolve

    task = resolve([str(task_yaml)])[0]
    rows = []
    for s in task.samples(limit=n):
        rows.append({"prompt": task.render_user(s), "answer": s.target})
    d = tmp / "lm_eval_tasks"
    d.mkdir(exist_ok=True)
    (d / "items.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    (d / "glot_mc.yaml").write_text(yaml.safe_dump({
        "task": "glot_mc",
        "dataset_path": "json",
        "dataset_kwargs": {"data_files": {"test": str(d / "items.jsonl")}},
        "test_split": "test",
        "output_type": "generate_until",
        "doc_to_text": "{{prompt}}",
        "doc_to_target": "{{answer}}",
        "generation_kwargs": {"until": [], "max_gen_toks": MAX_TOKENS, "do_sample": False, "temperature": 0.0},
        "metric_list": [{"metric": "exact_match"}],
    }, allow_unicode=True), encoding="utf-8")
    return d


def run_glotbench(base_url: str, task_yaml: Path, n: int, concurrency: int, tmp: Path, tag: str) -> float:
    cfg = RunConfig(model="openai:bench", base_url=base_url, tasks=[str(task_yaml)], limit=n, concurrency=concurrency,
                    output=str(tmp / f"gb-{tag}-{concurrency}-{time.time_ns()}"), bootstrap=200, timeout=600)
    os.environ.setdefault("OPENAI_API_KEY", "bench")
    t0 = time.perf_counter()
    results, _ = run_evaluation(cfg, show_progress=False)
    dt = time.perf_counter() - t0
    t = results["tasks"]["bench.mc"]
    assert t["n_scored"] == n, t
    return n / dt


def run_lm_eval(base_url: str, task_dir: Path, n: int, concurrency: int) -> float | None:
    try:
        import lm_eval
        from lm_eval.tasks import TaskManager
    except ImportError:
        return None
    tm = TaskManager(include_path=str(task_dir))
    t0 = time.perf_counter()
    lm_eval.simple_evaluate(
        model="local-chat-completions",
        model_args=f"model=bench,base_url={base_url}/chat/completions,num_concurrent={concurrency},max_retries=3,tokenized_requests=False",
        tasks=["glot_mc"], task_manager=tm, apply_chat_template=True, system_instruction=SYSTEM, limit=n,
        log_samples=False, cache_requests=False,
    )
    return n / (time.perf_counter() - t0)


def start_llama_server(model: Path) -> tuple[str, subprocess.Popen]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1",
                             "--port", str(port), "--n_ctx", "2048", "--verbose", "False"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}/v1"
    wait_http(base + "/models", proc, timeout=180)
    return base, proc


def best(label: str, fn, levels: list[int]) -> tuple[float, int]:
    rates = {}
    for c in levels:
        r = fn(c)
        if r is None:
            return (float("nan"), 0)
        rates[c] = r
        print(f"  {label:10s} concurrency {c:3d}: {r:8.2f} items/s", flush=True)
    c = max(rates, key=rates.get)
    return rates[c], c


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=200)
    ap.add_argument("--overhead-items", type=int, default=1500)
    ap.add_argument("--server-levels", default="1,2,4")
    ap.add_argument("--stub-levels", default="16,64,128")
    ap.add_argument("--skip-lm-eval", action="store_true")
    ap.add_argument("--skip-server", action="store_true")
    a = ap.parse_args()
    if a.skip_lm_eval:
        sys.modules["lm_eval"] = None  # type: ignore[assignment]
    tmp = Path(tempfile.mkdtemp(prefix="glotbench-bench-"))
    task_yaml = bench_task_yaml(tmp)
    summary = {}

    # (b) overhead against an instant stub: all MC items of MM-Eval knowledge, repeated via limit.
    big_yaml = task_yaml  # knowledge has 344 items; use every MC task for a larger count
    print(f"(b) harness overhead against an instant stub server ({a.overhead_items} items)")
    base, proc = start_stub("--answer", "A")
    try:
        yaml_all = bench_all_mc(tmp)
        n_all = min(a.overhead_items, count_items(yaml_all))
        gb, gb_c = best("glotbench", lambda c: run_glotbench(base, yaml_all, n_all, c, tmp, "stub"), [int(x) for x in a.stub_levels.split(",")])
        lm_dir = lm_eval_task(tmp, yaml_all, n_all)
        lm, lm_c = best("lm-eval", lambda c: run_lm_eval(base, lm_dir, n_all, c), [int(x) for x in a.stub_levels.split(",")])
        summary["overhead"] = {"items": n_all, "glotbench_items_s": gb, "glotbench_concurrency": gb_c,
                               "lm_eval_items_s": lm, "lm_eval_concurrency": lm_c}
    finally:
        stop(proc)

    if not a.skip_server:
        print(f"(a) real llama.cpp server, SmolLM2-135M-Instruct, {a.items} generative multiple-choice items")
        base, proc = start_llama_server(default_gguf_path())
        try:
            lm_dir = lm_eval_task(tmp, task_yaml, a.items)
            levels = [int(x) for x in a.server_levels.split(",")]
            # warm the server once so neither harness pays the first-load cost
            run_glotbench(base, task_yaml, 2, 1, tmp, "warm")
            lm, lm_c = best("lm-eval", lambda c: run_lm_eval(base, lm_dir, a.items, c), levels)
            gb, gb_c = best("glotbench", lambda c: run_glotbench(base, task_yaml, a.items, c, tmp, "srv"), levels)
            summary["llama_server"] = {"items": a.items, "glotbench_items_s": gb, "glotbench_concurrency": gb_c,
                                       "lm_eval_items_s": lm, "lm_eval_concurrency": lm_c,
                                       "ratio_glotbench_over_lm_eval": gb / lm if lm == lm else None}
        finally:
            stop(proc)

    print("\nsummary")
    if "overhead" in summary:
        o = summary["overhead"]
        print(f"  overhead: glotbench {o['glotbench_items_s']:.0f} items/s (concurrency {o['glotbench_concurrency']})"
              f"  lm-eval {o['lm_eval_items_s']:.0f} items/s  ratio {o['glotbench_items_s'] / o['lm_eval_items_s']:.2f}x"
              f"  target >= 1000 items/s: {'met' if o['glotbench_items_s'] >= 1000 else 'NOT met'}")
    if "llama_server" in summary:
        s = summary["llama_server"]
        print(f"  llama.cpp server: glotbench {s['glotbench_items_s']:.2f} items/s (c={s['glotbench_concurrency']})"
              f"  lm-eval {s['lm_eval_items_s']:.2f} items/s (c={s['lm_eval_concurrency']})"
              f"  ratio {s['ratio_glotbench_over_lm_eval']:.2f}x")
    (tmp / "summary.json").write_text(json.dumps(summary, indent=2))
    print(f"  details: {tmp / 'summary.json'}")


def bench_all_mc(tmp: Path) -> Path:
    """One task over the MC items of MM-Eval semantics+knowledge+syntax, concatenated."""
    from glotbench.paths import resolve_data_file

    rows = []
    for level in ("semantics", "knowledge", "syntax"):
        for r in json.loads(resolve_data_file(f"mm_eval/{level}_eval.json").read_text(encoding="utf-8")):
            rows.append({"question": r.get("question", ""), "choices": r["choices"], "answerKey": r["answerKey"]})
    data = tmp / "all_mc.json"
    data.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    spec = yaml.safe_load(bench_task_yaml(tmp).read_text(encoding="utf-8"))
    spec["name"] = "bench.mc"
    spec["dataset"]["splits"] = {"test": str(data)}
    spec["fields"]["question"] = "question"
    out = tmp / "bench_all_mc.yaml"
    out.write_text(yaml.safe_dump(spec, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return out


def count_items(task_yaml: Path) -> int:
    spec = yaml.safe_load(task_yaml.read_text(encoding="utf-8"))
    return len(json.loads(Path(spec["dataset"]["splits"]["test"]).read_text(encoding="utf-8")))


if __name__ == "__main__":
    main()
