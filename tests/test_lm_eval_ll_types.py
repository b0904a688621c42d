"""lm-eval's log-likelihood output types through `glotbench tasks import-lm-eval`, on the task files as
shipped inside the installed lm-eval wheel: wikitext (``output_type: loglikelihood_rolling``, its
``!function`` detokenizer and ``process_results`` delegated with ``--lm-eval-hooks``) and lambada_openai
(``output_type: loglikelihood``: one target continuation per item). Each is converted and run by the CLI
(fresh processes) against the stub server on local records in the dataset's record shape; every
request equals what lm-eval's own ``ConfigurableTask.build_all_requests`` builds on the same records,
and every metric equals lm-eval's aggregation (api/metrics.py: ``weighted_perplexity``,
``bits_per_byte``, ``perplexity``, ``mean`` of ``is_greedy``), restated here over the per-item
log-likelihoods the run recorded, with the per-item counts lm-eval's own ``process_results`` gives.
lm-eval (``pip install --no-deps lm-eval``) with ``datasets`` is needed; without them the tests skip."""

from __future__ import annotations

import json
import math
import re

import pytest
from test_lm_eval_zoo_import import _tasks_dir, cli, lm_eval_requests

PAGES = [" = Valkyria @-@ Chronicles = \n Senjō no Valkyria 3 , is a game ( 2011 ) . It 's \" great \" ; yes . \n",
         "Tom 's cat , the 1 @,@ 000 @.@ 5 km run ! Žluťoučký kůň .",
         " = = Heading = = \n text ? more  words here . \n \n",
         "Plain text without tokenizer marks, 12 words in all, said Ödön."]
TEXTS = ["the cat sat on the mat", "she opened the door and saw her brother", "Zoltán ate a big red apple",
         "„Gyere ide” — mondta az öreg halász"]


def _run(tmp_path, rel: str, task: str, splits: dict[str, list[dict]], *flags: str):
    """Convert ``rel`` (CLI), run it on the stub, return (records by id, results' task entry, lm-eval's requests)."""
    from glotbench.testing.servers import start_stub, stop

    tasks_dir = _tasks_dir()
    (tmp_path / "data").mkdir()
    files = {}
    for split, recs in splits.items():
        files[split] = tmp_path / "data" / f"{task}_{split}.jsonl"
        files[split].write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs), encoding="utf-8")
    c = cli("tasks", "import", str(tasks_dir / rel), *flags, "--data-dir", "data", "--language", "en",
            "-o", f"{task}.yaml", cwd=tmp_path)
    assert c.returncode == 0, c.stderr
    base, proc = start_stub("--answer", "A")
    try:
        r = cli("run", "-m", "openai:stub", "--base-url", base, "-M", "logprobs_trusted=true", "-t", f"{task}.yaml",
                "-o", "run", "--no-progress", "--bootstrap", "20", "--max-retries", "0", cwd=tmp_path)
    finally:
        stop(proc)
    assert r.returncode == 0, r.stderr[-2000:]
    recs = {int(x["sample_id"]): x for x in map(json.loads, (tmp_path / "run" / "samples.jsonl").read_text().splitlines())}
    [entry] = json.loads((tmp_path / "run" / "results.json").read_text())["tasks"].values()
    return recs, entry, lm_eval_requests(tasks_dir, rel, 0, {s: files[s] for s in files})


def test_wikitext_rolling_requests_and_metrics_equal_lm_evals(tmp_path):
    recs, entry, theirs = _run(tmp_path, "wikitext/wikitext.yaml", "wikitext",
                               {"test": [{"page": p} for p in PAGES], "train": [{"page": p} for p in PAGES[:2]]},
                               "--lm-eval-hooks")
    assert entry["mode"] == "loglikelihood_rolling" and entry["n_scored"] == len(PAGES)
    for i, page in enumerate(PAGES):
        [(text,)] = theirs[i]  # lm-eval sends doc_to_target (its detokenizer's text), nothing else
        assert recs[i]["gold"] == text and recs[i]["prompt"] == ""
    assert sum(recs[i]["gold"] != p for i, p in enumerate(PAGES)) == 3  # the detokenizer ran (the last page is plain)
    # lm-eval's wikitext process_results counts the page *before* detokenising: restated per item
    ll = [recs[i]["outputs"][0]["logprob"] for i in range(len(PAGES))]
    words = [len(re.split(r"\s+", p)) for p in PAGES]
    nbytes = [len(p.encode("utf-8")) for p in PAGES]
    assert words != [len(re.split(r"\s+", recs[i]["gold"])) for i in range(len(PAGES))]  # the delegation matters
    want = {"word_perplexity": math.exp(-sum(ll) / sum(words)), "byte_perplexity": math.exp(-sum(ll) / sum(nbytes)),
            "bits_per_byte": -sum(ll) / sum(nbytes) / math.log(2)}
    assert list(entry["metrics"]) == list(want)
    for name, value in want.items():
        assert entry["metrics"][name]["value"] == pytest.approx(value, rel=1e-6), name


def test_lambada_continuation_requests_and_metrics_equal_lm_evals(tmp_path):
    recs, entry, theirs = _run(tmp_path, "lambada/lambada_openai.yaml", "lambada_openai",
                               {"test": [{"text": t} for t in TEXTS]})
    assert entry["mode"] == "loglikelihood" and entry["n_scored"] == len(TEXTS)
    for i in range(len(TEXTS)):
        [(context, continuation)] = theirs[i]
        assert continuation.startswith(" ") and context.endswith(TEXTS[i].split(" ")[-2])
        assert recs[i]["gold"] == continuation and recs[i]["prompt"] == context
    outs = [recs[i]["outputs"][0] for i in range(len(TEXTS))]
    lls = [o["logprob"] for o in outs]
    want = {"continuation_perplexity": math.exp(-(sum(lls) / len(lls))),  # lm-eval's perplexity: exp(-mean(ll))
            "accuracy": sum(int(o["is_greedy"]) for o in outs) / len(outs)}  # lm-eval's acc: mean of is_greedy
    assert list(entry["metrics"]) == list(want)
    for name, value in want.items():
        assert entry["metrics"][name]["value"] == pytest.approx(value, rel=1e-6), name


def test_without_hooks_wikitext_is_refused_naming_the_hooks(tmp_path):
    c = cli("tasks", "import", str(_tasks_dir() / "wikitext" / "wikitext.yaml"), "-o", "out.yaml", cwd=tmp_path)
    assert c.returncode == 2 and not (tmp_path / "out.yaml").exists()
    assert "process_results" in c.stderr and "doc_to_target" in c.stderr


def test_lambada_accuracy_is_lm_evals_is_greedy(tmp_path):
    """The stub's continuations are always greedy: a result that is not counts as wrong (lm-eval's acc =
    int(is_greedy)), its log-likelihood still in the perplexity."""
    import yaml

    from glotbench.models.base import LoglikelihoodResult
    from glotbench.tasks.lm_eval_import import convert, read_lm_eval_yaml
    from glotbench.tasks.registry import make_task
    from glotbench.tasks.spec import TaskSpec

    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "lambada_openai_test.jsonl").write_text(json.dumps({"text": TEXTS[0]}) + "\n", encoding="utf-8")
    spec, _ = convert(read_lm_eval_yaml(_tasks_dir() / "lambada" / "lambada_openai.yaml"), language="en",
                      data_dir=str(tmp_path / "data"))
    task = make_task(TaskSpec.model_validate(yaml.safe_load(yaml.safe_dump(spec))), tmp_path / "t.yaml")
    [sample] = task.samples("test")
    for greedy in (True, False):
        s = task.score(sample, [LoglikelihoodResult(logprob=-1.5, is_greedy=greedy, n_tokens=2)], mode="loglikelihood")
        assert s.values == {"nll": 1.5, "n_items": 1.0, "correct": float(greedy)}
        assert (s.pred == sample.target) is greedy and sample.target == " mat"


@pytest.mark.slow
def test_lambada_with_the_embedded_model_equals_llama_cpp_pythons_own_logits(tmp_path, smollm2_path):
    """The converted lambada_openai run by the embedded model (the real GGUF): each item's
    log-likelihood and greediness equal llama-cpp-python's own logits on lm-eval's (context,
    continuation) split as lm-eval's HFLM splits it (trailing spaces of the context moved to the
    continuation, the whole string encoded, the continuation = what follows the context's tokens)."""
    import llama_cpp
    import numpy as np

    tasks_dir = _tasks_dir()
    (tmp_path / "data").mkdir()
    f = tmp_path / "data" / "lambada_openai_test.jsonl"
    f.write_text("".join(json.dumps({"text": t}, ensure_ascii=False) + "\n" for t in TEXTS), encoding="utf-8")
    c = cli("tasks", "import", str(tasks_dir / "lambada/lambada_openai.yaml"), "--data-dir", "data",
            "-o", "lambada.yaml", cwd=tmp_path)
    assert c.returncode == 0, c.stderr
    r = cli("run", "-m", "embedded", "-t", "lambada.yaml", "-o", "run", "--no-progress", "--bootstrap", "20",
            cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    recs = {int(x["sample_id"]): x for x in map(json.loads, (tmp_path / "run" / "samples.jsonl").read_text().splitlines())}
    [entry] = json.loads((tmp_path / "run" / "results.json").read_text())["tasks"].values()
    theirs = lm_eval_requests(tasks_dir, "lambada/lambada_openai.yaml", 0, {"test": f})
    llm = llama_cpp.Llama(model_path=str(smollm2_path), n_ctx=512, logits_all=True, verbose=False, seed=0)
    try:
        for i in range(len(TEXTS)):
            [(context, continuation)] = theirs[i]
            n_space = len(context) - len(context.rstrip())
            context, continuation = context[: len(context) - n_space], context[len(context) - n_space:] + continuation
            whole = llm.tokenize((context + continuation).encode("utf-8"), add_bos=True)
            ctx = llm.tokenize(context.encode("utf-8"), add_bos=True)
            cont = whole[len(ctx):]
            llm.reset()
            llm.eval(whole[:-1])
            scores = np.asarray(llm.scores[: len(whole) - 1], dtype=np.float64)
            lp = scores - scores.max(axis=1, keepdims=True)
            lp = lp - np.log(np.exp(lp).sum(axis=1, keepdims=True))
            rows = lp[len(ctx) - 1: len(whole) - 1]
            want = float(sum(rows[k, t] for k, t in enumerate(cont)))
            greedy = all(int(np.argmax(rows[k])) == t for k, t in enumerate(cont))
            out = recs[i]["outputs"][0]
            assert out["logprob"] == pytest.approx(want, abs=2e-3), i
            assert out["is_greedy"] is greedy, i
    finally:
        llm.close()
    lls = [recs[i]["outputs"][0]["logprob"] for i in range(len(TEXTS))]
    assert entry["metrics"]["continuation_perplexity"]["value"] == pytest.approx(math.exp(-(sum(lls) / len(lls))), rel=1e-6)
    assert entry["metrics"]["accuracy"]["value"] == pytest.approx(
        sum(recs[i]["outputs"][0]["is_greedy"] for i in range(len(TEXTS))) / len(TEXTS))


def _export(tmp_path) -> tuple[dict, list[dict]]:
    e = cli("runs", "export", "run", "--format", "lm-eval", "-o", "lm", cwd=tmp_path)
    assert e.returncode == 0, e.stderr
    [res] = list((tmp_path / "lm").glob("*/results_*.json"))
    [samples] = list(res.parent.glob("samples_*.jsonl"))
    return json.loads(res.read_text()), [json.loads(x) for x in samples.read_text().splitlines()]


def test_lm_eval_export_names_the_log_likelihood_metrics_as_lm_eval_does(tmp_path):
    """lambada's ``perplexity`` and ``acc`` and wikitext's three rolling metrics come out under lm-eval's own
    keys, aggregations, stderr (``N/A`` where lm-eval computes none) and output types, with lm-eval's
    per-sample values (the item's log-likelihood, with its count for a rolling metric), and lm-eval's own
    ``make_table`` reads them."""
    for sub in ("l", "w"):
        (tmp_path / sub).mkdir()
    recs, entry, _ = _run(tmp_path / "l", "lambada/lambada_openai.yaml", "lambada_openai", {"test": [{"text": t} for t in TEXTS]})
    res, lines = _export(tmp_path / "l")
    [(name, r)] = res["results"].items()
    assert r["perplexity,none"] == pytest.approx(entry["metrics"]["continuation_perplexity"]["value"])
    assert r["acc,none"] == pytest.approx(entry["metrics"]["accuracy"]["value"])
    assert isinstance(r["perplexity_stderr,none"], float) and "continuation_perplexity,none" not in r
    cfg = res["configs"][name]
    assert cfg["output_type"] == "loglikelihood"
    assert {m["metric"]: (m["aggregation"], m["higher_is_better"]) for m in cfg["metric_list"]} == {
        "perplexity": ("perplexity", False), "acc": ("mean", True)}
    by_doc = {int(x["doc_id"]): x for x in lines}
    for i in range(len(TEXTS)):
        assert by_doc[i]["perplexity"] == pytest.approx(recs[i]["outputs"][0]["logprob"])  # lm-eval: (ll, is_greedy)[0]
    recs, entry, _ = _run(tmp_path / "w", "wikitext/wikitext.yaml", "wikitext",
                          {"test": [{"page": p} for p in PAGES], "train": [{"page": p} for p in PAGES[:2]]}, "--lm-eval-hooks")
    res, lines = _export(tmp_path / "w")
    [(name, r)] = res["results"].items()
    assert res["configs"][name]["output_type"] == "loglikelihood_rolling"
    for m, agg in (("word_perplexity", "weighted_perplexity"), ("byte_perplexity", "weighted_perplexity"),
                   ("bits_per_byte", "bits_per_byte")):
        assert r[f"{m},none"] == pytest.approx(entry["metrics"][m]["value"]) and r[f"{m}_stderr,none"] == "N/A", m
        assert {x["metric"]: x["aggregation"] for x in res["configs"][name]["metric_list"]}[m] == agg
    line = {int(x["doc_id"]): x for x in lines}[0]
    words = len(re.split(r"\s+", PAGES[0]))
    assert line["word_perplexity"] == [pytest.approx(recs[0]["outputs"][0]["logprob"]), words]
    pytest.importorskip("pytablewriter", reason="lm_eval.utils.make_table needs pytablewriter")
    from lm_eval.utils import make_table

    table = make_table(res)
    assert "word_perplexity" in table and "bits_per_byte" in table
