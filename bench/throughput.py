"""Throughput of glotbench, measured side by side with lm-evaluation-harness in one run.

(a) Against a real llama.cpp server (llama-cpp-python[server], SmolLM2-135M-Instruct GGUF on
    loopback): the same N generative multiple-choice items (MM-Eval knowledge, the same chat
    prompts, greedy, the same max tokens) through glotbench's OpenAI-compatible backend and
    through lm-eval's `local-chat-completions`, each at its best concurrency; prints items/s and
    the ratio glotbench / lm-eval.
(b) Pure harness overhead: items/s against an instant local OpenAI-compatible stub server
    (glotbench.testing.stub_openai). glotbench and lm-eval (and, with --baseline-src, another
    glotbench checkout) alternate over --rounds rounds, each pass in a fresh interpreter, the
    order rotating every round; prints every pass, the medians, and the ratios (of medians and
    the median of per-round ratios). With a baseline, the predictions of both glotbench runs are
    compared item by item. A "bare client" pass in the same rounds posts glotbench's own request
    bodies for the same items through one aiohttp session (glotbench's HTTP client) with the same
    concurrency, reading and decoding each answer and doing nothing else: the most items/s any
    harness built on that client could reach on this machine at that moment. glotbench / bare client
    is the share of that limit the harness keeps; it moves far less with the machine's load than
    absolute items/s (which moved 1.6x within minutes on this shared VM). An "engine" pass runs the
    same items through glotbench with recorded answers as the model (``recorded:``, no HTTP): its
    CPU per item is glotbench's own work, and the glotbench pass minus it is what the HTTP exchange
    costs inside a run, printed beside the bare client's cost for the same exchange. A "durable"
    pass is the bare client plus the least journal a resumable harness needs (bench/durable_client.py).

    python bench/throughput.py [--overhead-items 1500] [--rounds 5] [--baseline-src /tmp/base/src]
                               [--skip-server] [--skip-lm-eval] [--items 200]

Each glotbench pass uses a fresh run directory, so nothing comes from its cache. Times are wall
clock of the in-process evaluate call for both harnesses, after one 50-item warm-up call in the same
process (imports, lazily imported libraries and compiled templates are paid before the clock starts:
this measures per-item overhead, not start-up). The machine is shared:
ratios from one interleaved run count, absolutes do not. After the warm-up, glotbench's passes (and the
bare client's) set the garbage collector as ``glotbench run`` does for its run (objects alive frozen,
young collections 10,000 allocations apart: a tenth of a pass's CPU at Python's defaults);
``--host-gc`` keeps Python's defaults, as ``glotbench.evaluate()`` leaves a host process's.
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
# a timed pass may run another checkout's sources (--src, for the baseline): put those first
_SRC = sys.argv[sys.argv.index("--src") + 1] if "--src" in sys.argv else str(REPO / "src")
sys.path.insert(0, _SRC)
sys.path.insert(1, str(Path(__file__).resolve().parent))  # bench/cpu_accounting.py

from glotbench.engine.config import RunConfig  # noqa: E402
from glotbench.engine.session import run_evaluation  # noqa: E402
from glotbench.models.embedded import default_gguf_path  # noqa: E402
from glotbench.tasks.registry import all_specs  # noqa: E402
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


def run_glotbench(base_url: str, task_yaml: Path, n: int, concurrency: int, tmp: Path, tag: str,
                  model: str = "openai:bench", bootstrap: int = 200) -> float:
    """items/s of one glotbench run over the first ``n`` items; ``model`` another backend (the engine
    pass: ``recorded:<answers>``, no HTTP), ``base_url`` then unused; ``bootstrap``: its resamples."""
    http = model.startswith("openai:")
    cfg = RunConfig(model=model, base_url=base_url if http else None, tasks=[str(task_yaml)], limit=n,
                    concurrency=concurrency, output=str(tmp / f"gb-{tag}-{concurrency}-{time.time_ns()}"), bootstrap=bootstrap,
                    timeout=600)
    os.environ.setdefault("OPENAI_API_KEY", "bench")
    t0 = time.perf_counter()
    results, _ = run_evaluation(cfg, show_progress=False)
    dt = time.perf_counter() - t0
    t = results["tasks"]["bench.mc"]
    assert t["n_scored"] == n, t
    return n / dt


def run_lm_eval(base_url: str, task_dir: Path, n: int, concurrency: int, clock: list | None = None) -> float | None:
    """items/s of lm-eval over ``n`` items; the wall clock starts after its TaskManager is built (its
    start-up: indexing every task folder), and ``clock`` gets the CPU readings (start, ready)."""
    try:
        import lm_eval
        from lm_eval.tasks import TaskManager
    except ImportError:
        return None
    if clock is not None:
        clock.append(time.process_time())
    tm = TaskManager(include_path=str(task_dir))
    if clock is not None:
        clock.append(time.process_time())
    t0 = time.perf_counter()
    lm_eval.simple_evaluate(
        model="local-chat-completions",
        model_args=f"model=bench,base_url={base_url}/chat/completions,num_concurrent={concurrency},max_retries=3,tokenized_requests=False",
        tasks=["glot_mc"], task_manager=tm, apply_chat_template=True, system_instruction=SYSTEM, limit=n,
        log_samples=False, cache_requests=False,
    )
    return n / (time.perf_counter() - t0)


def start_llama_server(model: Path, threads: int) -> tuple[str, subprocess.Popen]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1",
                             "--port", str(port), "--n_ctx", "2048", "--verbose", "False",
                             "--n_threads", str(threads), "--n_threads_batch", str(threads)],
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


def recorded_answers(task_yaml: Path, n: int, tmp: Path) -> Path:
    """A ``recorded:`` answers file giving the stub's answer ("A") to the first ``n`` items: the
    engine pass runs the same items through glotbench with these as the model, so everything a
    run does is there but the HTTP exchange (docs/recorded-answers.md)."""
    from glotbench.tasks.registry import resolve

    task = resolve([str(task_yaml)])[0]
    out = tmp / f"answers-{n}.jsonl"
    out.write_text("".join(json.dumps({"id": s.id, "answer": "A"}) + "\n" for s in task.samples(limit=n)),
                   encoding="utf-8")
    return out


def request_bodies(task_yaml: Path, n: int) -> list[bytes]:
    """The JSON bodies glotbench sends for the first ``n`` items (rendered by glotbench itself)."""
    from glotbench import json_codec
    from glotbench.models.openai_compat import OpenAICompatModel
    from glotbench.tasks.request_settings import RequestSettings
    from glotbench.tasks.registry import resolve

    task = resolve([str(task_yaml)])[0]
    settings = RequestSettings()
    bodies = []
    for sample in task.samples(limit=n):
        req = task.requests(sample, mode="generate", chat=True, settings=settings)[0]
        payload = {"model": "bench", "messages": [dict(m) for m in req.messages], **OpenAICompatModel._sampling(req)}
        bodies.append(json_codec.dumps_bytes(payload))
    return bodies


def run_bare_client(base_url: str, bodies: list[bytes], concurrency: int) -> float:
    """items/s of posting ``bodies`` through one aiohttp session, ``concurrency`` workers, each answer
    read and decoded: the HTTP client's own limit, with no harness around it."""
    import asyncio

    import aiohttp

    from glotbench import json_codec

    async def go() -> float:
        queue: asyncio.Queue = asyncio.Queue()
        for b in bodies:
            queue.put_nowait(b)
        headers = {"Authorization": "Bearer bench", "Content-Type": "application/json"}
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0), headers=headers) as session:
            url = base_url + "/chat/completions"

            async def worker() -> None:
                while not queue.empty():
                    body = queue.get_nowait()
                    async with session.post(url, data=body, allow_redirects=False) as resp:
                        data = json_codec.loads(await resp.read())
                    assert data["choices"][0]["message"]["content"] is not None

            t0 = time.perf_counter()
            await asyncio.gather(*(worker() for _ in range(concurrency)))
            return len(bodies) / (time.perf_counter() - t0)

    return asyncio.run(go())


def collector_as_cli(a) -> None:
    """The garbage collector as ``glotbench run`` sets it for its run (cli/run.py: the objects alive
    now frozen, young collections 10,000 allocations apart), unless ``--host-gc``: then as
    ``glotbench.evaluate()`` leaves a host process's collector, Python's defaults. The bare client's
    pass gets the same setting (it is the limit any harness on that client could reach in such a
    process); lm-eval's passes keep Python's defaults, as its own CLI runs."""
    if a.host_gc:
        return
    import gc

    gc.freeze()
    gc.set_threshold(10_000, *gc.get_threshold()[1:])


def one_pass(a) -> None:
    """One timed pass in this (fresh) process: prints one JSON line with items/s, the CPU per item
    of the items phase (the tool's start-up outside it: bench/cpu_accounting.py) and predictions."""
    from cpu_accounting import pass_cpu

    n = a.n
    if a.one in ("bare", "durable"):  # glotbench's bodies through aiohttp alone (durable: each answer journaled)
        from durable_client import run_durable_client

        def post(bodies: list[bytes]) -> float:
            if a.one == "bare":
                return run_bare_client(a.base_url, bodies, a.concurrency)
            return run_durable_client(a.base_url, bodies, a.concurrency, Path(a.tmp) / f"durable-{time.time_ns()}.sqlite")

        bodies = request_bodies(Path(a.task_yaml), n)
        post(bodies[:50])  # warm-up, as for the harnesses
        collector_as_cli(a)
        c0 = time.process_time()
        rate = post(bodies)
        print(json.dumps({"items_s": rate, **pass_cpu(c0, c0, time.process_time(), n)}))
        return
    if a.one == "lm-eval":
        run_lm_eval(a.base_url, Path(a.lm_dir), min(n, 50), a.concurrency)  # warm-up: lazy imports, caches
        clock: list[float] = []  # start, then ready (its TaskManager built)
        rate = run_lm_eval(a.base_url, Path(a.lm_dir), n, a.concurrency, clock)
        done = time.process_time()
        print(json.dumps({"items_s": rate, **(pass_cpu(clock[0], clock[1], done, n) if clock else {})}))
        return
    model = "openai:bench"
    if a.one == "engine":  # the same run with recorded answers as the model: glotbench's work without HTTP
        model = f"recorded:{recorded_answers(Path(a.task_yaml), n, Path(a.tmp))}"
    run_glotbench(a.base_url, Path(a.task_yaml), min(n, 50), a.concurrency, Path(a.tmp), "warm", model)  # lazy imports
    collector_as_cli(a)
    c0 = time.process_time()  # glotbench has no start-up to set apart: resolving the task file is inside the call
    rate = run_glotbench(a.base_url, Path(a.task_yaml), n, a.concurrency, Path(a.tmp), a.one, model)
    cpu = pass_cpu(c0, c0, time.process_time(), n)
    out = max((d for d in Path(a.tmp).iterdir() if d.name.startswith(f"gb-{a.one}-")), key=lambda d: d.stat().st_mtime)
    import sqlite3

    con = sqlite3.connect(out / "journal.sqlite")
    preds = {sid: json.loads(rec).get("pred") for sid, rec in con.execute("SELECT sample_id, record FROM samples")}
    con.close()
    print(json.dumps({"items_s": rate, **cpu, "preds": preds}))


def timed_pass(which: str, src: Path, a, base: str, yaml_all: Path, lm_dir: Path, n: int, tmp: Path) -> dict:
    """Run one pass in a fresh interpreter with ``src`` first on sys.path (so a baseline checkout
    can be measured by the same script); the timing is of the evaluate call only."""
    env = os.environ.copy()
    env["PYTHONPATH"] = str(src)
    env["OPENAI_API_KEY"] = "bench"
    c = a.lm_concurrency if which == "lm-eval" else a.concurrency
    cmd = [sys.executable, str(Path(__file__).resolve()), "--one", which, "--src", str(src), "--base-url", base,
           "--task-yaml", str(yaml_all), "--lm-dir", str(lm_dir), "--n", str(n), "--concurrency", str(c),
           "--tmp", str(tmp), *(["--host-gc"] if a.host_gc else [])]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"{which} pass failed:\n{p.stderr[-3000:]}")
    res = json.loads(p.stdout.strip().splitlines()[-1])
    if res["items_s"] is None:
        raise SystemExit(f"{which}: not importable here (pip install lm-eval with its dependencies, or --skip-lm-eval)")
    return res


def overhead_interleaved(a, tmp: Path) -> dict:
    """(b) glotbench and lm-eval (and a baseline glotbench checkout, when given) alternate over
    several rounds against one instant stub; medians and per-round ratios are printed."""
    import statistics

    yaml_all = bench_all_mc(tmp)
    n = min(a.overhead_items, count_items(yaml_all))
    lm_dir = lm_eval_task(tmp, yaml_all, n)
    contenders = [("glotbench", REPO / "src")]
    if a.baseline_src:
        contenders.append(("baseline", Path(a.baseline_src).resolve()))
    if not a.skip_lm_eval:
        contenders.append(("lm-eval", REPO / "src"))
    if not a.skip_bare:
        contenders.append(("bare", REPO / "src"))
    if not a.skip_engine:
        contenders.append(("engine", REPO / "src"))
    if not a.skip_durable:
        contenders.append(("durable", REPO / "src"))
    print(f"(b) harness overhead against an instant stub server: {n} items, {a.rounds} interleaved rounds, "
          f"glotbench concurrency {a.concurrency}, lm-eval num_concurrent {a.lm_concurrency}; garbage collector "
          f"{'as Python leaves it (--host-gc)' if a.host_gc else 'as glotbench run sets it, for glotbench and the bare client'}",
          flush=True)
    rates: dict[str, list[float]] = {name: [] for name, _ in contenders}
    cpu: dict[str, list[float]] = {name: [] for name, _ in contenders}  # ms of the harness's own CPU per item
    preds: dict[str, dict] = {}
    base, proc = start_stub("--answer", "A")
    try:
        for r in range(a.rounds):
            order = contenders[r % len(contenders):] + contenders[:r % len(contenders)]  # rotate who goes first
            line = []
            for name, src in order:
                res = timed_pass(name, src, a, base, yaml_all, lm_dir, n, tmp)
                rates[name].append(res["items_s"])
                cpu[name].append(res["cpu_ms_per_item"])
                preds.setdefault(name, res.get("preds"))
                startup = f", start-up {res['startup_cpu_s']:.2f} CPU-s apart" if res.get("startup_cpu_s") else ""
                line.append(f"{name} {res['items_s']:7.1f} ({res['cpu_ms_per_item']:.2f} ms CPU/item{startup})")
            print(f"  round {r}: " + "  ".join(line) + " items/s", flush=True)
    finally:
        stop(proc)
    out = {"items": n, "rounds": a.rounds, "rates": rates,
           "median": {k: statistics.median(v) for k, v in rates.items()},
           "cpu_ms_per_item": cpu, "median_cpu_ms_per_item": {k: statistics.median(v) for k, v in cpu.items()}}
    for other in ("lm-eval", "baseline", "bare"):
        if other in rates:
            out[f"ratio_vs_{other}_median"] = out["median"]["glotbench"] / out["median"][other]
            out[f"ratio_vs_{other}_per_round"] = statistics.median(g / o for g, o in zip(rates["glotbench"], rates[other]))
    if "baseline" in preds:
        a_, b_ = preds["glotbench"], preds["baseline"]
        out["predictions_unchanged"] = a_ == b_
        out["predictions_compared"] = len(a_)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=200)
    ap.add_argument("--overhead-items", type=int, default=1500)
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds of the overhead bench")
    ap.add_argument("--concurrency", type=int, default=64, help="glotbench concurrency against the stub")
    ap.add_argument("--lm-concurrency", type=int, default=64, help="lm-eval num_concurrent against the stub")
    ap.add_argument("--baseline-src", default=None,
                    help="src/ of another glotbench checkout, measured interleaved too (e.g. /tmp/base/src)")
    ap.add_argument("--server-levels", default="1,2,4")
    ap.add_argument("--server-threads", type=int, default=os.cpu_count() or 1,
                    help="llama.cpp server threads (default: every core)")
    ap.add_argument("--skip-lm-eval", action="store_true")
    ap.add_argument("--skip-bare", action="store_true", help="no bare-client pass (the HTTP client's own limit)")
    ap.add_argument("--skip-engine", action="store_true",
                    help="no engine pass (the same glotbench run with recorded answers as the model: no HTTP)")
    ap.add_argument("--skip-server", action="store_true")
    ap.add_argument("--host-gc", action="store_true",
                    help="glotbench's and the bare client's passes keep Python's collector defaults, as "
                         "glotbench.evaluate() leaves a host process's (default: as `glotbench run` sets it)")
    ap.add_argument("--skip-overhead", action="store_true")
    # one timed pass (internal: the interleaved bench runs each pass in a fresh interpreter)
    ap.add_argument("--skip-durable", action="store_true",
                    help="no durable-client pass (the bare client plus the least journal a resumable harness needs)")
    ap.add_argument("--one", choices=["glotbench", "baseline", "lm-eval", "bare", "engine", "durable"],
                    help=argparse.SUPPRESS)
    for opt in ("--src", "--base-url", "--task-yaml", "--lm-dir", "--tmp"):
        ap.add_argument(opt, help=argparse.SUPPRESS)
    ap.add_argument("--n", type=int, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        one_pass(a)
        return
    if a.skip_lm_eval:
        sys.modules["lm_eval"] = None  # type: ignore[assignment]
    tmp = Path(tempfile.mkdtemp(prefix="glotbench-bench-"))
    summary = {}

    if not a.skip_overhead:
        summary["overhead"] = overhead_interleaved(a, tmp)

    if not a.skip_server:
        task_yaml = bench_task_yaml(tmp)
        print(f"(a) real llama.cpp server ({a.server_threads} threads), SmolLM2-135M-Instruct, "
              f"{a.items} generative multiple-choice items")
        base, proc = start_llama_server(default_gguf_path(), a.server_threads)
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
        med = o["median"]
        print(f"  overhead ({o['items']} items, median of {o['rounds']} interleaved rounds): "
              f"glotbench {med['glotbench']:.0f} items/s"
              + (f", baseline {med['baseline']:.0f}" if "baseline" in med else "")
              + (f", lm-eval {med['lm-eval']:.0f}" if "lm-eval" in med else ""))
        mc = o["median_cpu_ms_per_item"]
        print(f"  load average {os.getloadavg()[0]:.1f} (1 min) at the end")
        print("  median CPU per item of the items phase (each tool's start-up outside it; steadier on a shared machine): "
              + ", ".join(f"{k} {v:.2f} ms" for k, v in mc.items()))
        if "lm-eval" in med:
            print(f"  CPU ratio lm-eval / glotbench: {mc['lm-eval'] / mc['glotbench']:.2f}x")
            print(f"  ratio glotbench / lm-eval: {o['ratio_vs_lm-eval_median']:.2f}x of medians, "
                  f"{o['ratio_vs_lm-eval_per_round']:.2f}x median per-round (target >= 3)")
        if "baseline" in med:
            print(f"  ratio glotbench / baseline: {o['ratio_vs_baseline_median']:.2f}x of medians; "
                  f"predictions unchanged on {o['predictions_compared']} items: {o['predictions_unchanged']}")
        if "bare" in med:
            print(f"  bare client (aiohttp alone, the same bodies and concurrency): {med['bare']:.0f} items/s; "
                  f"glotbench keeps {o['ratio_vs_bare_median']:.0%} of it (median per round "
                  f"{o['ratio_vs_bare_per_round']:.0%}), CPU per item {mc['glotbench'] / mc['bare']:.2f}x the client's (bar <= 2.0)")
        if "durable" in mc and "bare" in mc:
            print(f"  durable client (the bare client + every answer journaled, bench/durable_client.py): "
                  f"{mc['durable']:.3f} ms CPU per item = {mc['durable'] / mc['bare']:.2f}x the bare client's: "
                  f"the floor of a harness that loses no paid answer to a kill; glotbench = "
                  f"{mc['glotbench'] / mc['durable']:.2f}x it")
        if "engine" in mc and "bare" in mc:
            from cpu_accounting import cpu_split

            for line in cpu_split(mc["glotbench"], mc["engine"], mc["bare"]):
                print("  " + line)
        print(f"  target >= 1500 items/s: {'met' if med['glotbench'] >= 1500 else 'NOT met'}")
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
    from catalog_root import build_catalog

    build_catalog()
    main()
