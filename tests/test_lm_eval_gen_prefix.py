"""lm-eval's ``gen_prefix`` (the start of the answer turn) converts: the plain prompt ends with it, the
shots' answers follow it, a chat prompt ends with it as an open assistant turn; every prompt equals
lm-eval's own ConfigurableTask's (plain, and multi-turn chat through ``fewshot_context``) on the same
records, for literal, field and template prefixes, a ``fewshot_config`` override, prefixes and texts
with whitespace at the join, an empty shot answer, multiple-choice contexts and multiple inputs.
Llama-3.1's German MMLU as shipped in the lm-eval wheel runs through the CLI: its prompts equal
lm-eval's and its answers score; on a chat backend that cannot continue an assistant turn it is
refused before any request; hf's chat template leaves the prefix open (continue_final_message)."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
import yaml
from test_lm_eval_zoo_import import _tasks_dir, cli, lm_eval_requests

BASE = {"task": "gp", "dataset_path": "json", "test_split": "test", "fewshot_split": "train", "num_fewshot": 3,
        "fewshot_config": {"sampler": "first_n"}}
GEN = {**BASE, "output_type": "generate_until", "doc_to_text": "Q: {{q}}", "doc_to_target": "{{gold}}.",
       "generation_kwargs": {"until": ["."], "max_gen_toks": 5}}
MC = {**BASE, "output_type": "multiple_choice", "doc_to_text": "Q: {{q}}", "doc_to_target": "{{label}}",
      "doc_to_choice": "{{opts}}"}
CASES = {
    "literal": {**GEN, "gen_prefix": "The best answer is"},
    "whitespace at the join": {**GEN, "doc_to_text": "Q: {{q}}\n", "gen_prefix": "Answer: "},
    "template, few-shot override": {**GEN, "gen_prefix": "{{lead}} is",
                                    "fewshot_config": {"sampler": "first_n", "gen_prefix": "Example answer:",
                                                       "target_delimiter": " -> "}},
    "a record field": {**GEN, "gen_prefix": "lead"},
    "empty shot answer": {**GEN, "doc_to_target": "{{maybe}}", "gen_prefix": "So"},
    "multiple choice": {**MC, "gen_prefix": "Answer:"},
    "multiple input": {**MC, "doc_to_text": "{{label}}", "doc_to_target": "{{q}}", "doc_to_choice": "{{opts}}",
                       "gen_prefix": "then"},
}


def _records(split: str) -> list[dict]:
    return [{"q": f"{split} kérdés {i}?", "gold": "ABCD"[i % 4], "lead": f"Lead {i}", "maybe": "" if i % 2 else "yes",
             "opts": [f"igen {i}", "nem"], "label": i % 2} for i in range(5)]


def _split_files(tmp_path) -> dict:
    """The train and test records as JSONL under ``tmp_path/data`` (``--data-dir data``), by split."""
    (tmp_path / "data").mkdir()
    files = {}
    for split in ("train", "test"):
        files[split] = tmp_path / "data" / f"gp_{split}.jsonl"
        files[split].write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in _records(split)), encoding="utf-8")
    return files


@pytest.mark.parametrize("case", list(CASES))
def test_prompts_equal_lm_evals_own(case, tmp_path, monkeypatch):
    _tasks_dir()
    from lm_eval.api.task import ConfigurableTask

    from glotbench.tasks.lm_eval_import import cannot_run, convert, dump
    from glotbench.tasks.registry import resolve
    from glotbench.tasks.request_settings import RequestSettings

    src = CASES[case]
    files = _split_files(tmp_path)
    spec, problems = convert(src, language="hu", data_dir="data")
    assert not cannot_run(problems), problems
    (tmp_path / "ours.yaml").write_text(dump(spec, "lm.yaml"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    [ours] = resolve([str(tmp_path / "ours.yaml")])
    cfg = {**src, "dataset_kwargs": {"data_files": {s: str(p) for s, p in files.items()}}}
    plain_task, chat_task = ConfigurableTask(config=dict(cfg)), ConfigurableTask(config=dict(cfg))
    generation_prompt = []

    def template(msgs, add_generation_prompt=True):
        generation_prompt.append(add_generation_prompt)
        return msgs

    samples = ours.samples()
    for s, doc in zip(samples, plain_task.eval_docs):
        gp = plain_task.doc_to_prefix(doc)  # what build_all_requests passes
        plain = plain_task.fewshot_context(doc, 3, gen_prefix=gp)
        chat = chat_task.fewshot_context(doc, 3, apply_chat_template=True, fewshot_as_multiturn=True,
                                         chat_template=template, gen_prefix=gp)
        if src["output_type"] == "generate_until":
            assert ours.plain_prompt(s, 3) == plain
            assert ours.chat_messages(s, 3) == chat
            assert generation_prompt[-1] is False and chat[-1]["role"] == "assistant"  # the prefix, left open
        else:  # the contexts (one per choice for multiple inputs) and continuations, as lm-eval sends them
            reqs = ours.requests(s, mode="loglikelihood", chat=False, settings=RequestSettings(num_fewshot=3))
            args = [inst.arguments for inst in plain_task.construct_requests(doc, plain, metadata=(0, 0, 0))]
            assert [(r.context, r.continuation) for r in reqs] == [tuple(a) for a in args]
    assert len(samples) == 5
    if case == "literal":
        assert plain.endswith("Q: test kérdés 4? The best answer is")
        assert "Q: train kérdés 0? The best answer is A.\n\n" in plain
    if case == "whitespace at the join":
        assert plain.endswith("Q: test kérdés 4?\nAnswer: ")


def _llama_de(i: int) -> dict:
    return {"input_question": f" Welche Aussage {i} ist wahr? ", "input_choice_list": {x: f"Antwort {x}{i}" for x in "ABCD"},
            "input_correct_responses": ["ABCD"[i % 4]], "subtask_name": "mmlu_de_chat." + ("abstract_algebra" if i < 6 else "anatomy")}


def test_llama_german_mmlu_runs_as_lm_eval_builds_it_and_is_refused_on_a_chat_server(tmp_path):
    from glotbench.testing.servers import start_stub, stop

    tasks_dir = _tasks_dir()
    rel = "llama3/instruct/mmlu_de/mmlu_de_abstract_algebra.yaml"
    (tmp_path / "data").mkdir()
    files = {"latest": tmp_path / "data" / "mmlu_de_llama_abstract_algebra_latest.jsonl"}
    files["latest"].write_text("".join(json.dumps(_llama_de(i), ensure_ascii=False) + "\n" for i in range(8)),
                               encoding="utf-8")
    c = cli("tasks", "import", str(tasks_dir / rel), "--lm-eval-hooks", "--data-dir", "data", "--language", "de",
            "-o", "de.yaml", cwd=tmp_path)
    assert c.returncode == 0, c.stderr
    assert yaml.safe_load((tmp_path / "de.yaml").read_text(encoding="utf-8"))["options"]["gen_prefix"] == "The best answer is"
    base, proc = start_stub("--answer", " B")
    try:
        r = cli("run", "-m", "openai:stub", "--base-url", base, "-M", "chat=false", "-t", "de.yaml", "-o", "run",
                "--no-progress", "--bootstrap", "20", "--max-retries", "0", cwd=tmp_path)
        assert r.returncode == 0, r.stderr[-2000:]
        sent = len(httpx.get(base.replace("/v1", "/_log"), timeout=10).json()["log"])
        refused = cli("run", "-m", "openai:stub", "--base-url", base, "-t", "de.yaml", "-o", "chat", "--no-progress",
                      cwd=tmp_path)
        assert len(httpx.get(base.replace("/v1", "/_log"), timeout=10).json()["log"]) == sent  # 0 requests more
    finally:
        stop(proc)
    theirs = lm_eval_requests(tasks_dir, rel, 5, files)
    rows = [json.loads(x) for x in (tmp_path / "run" / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(theirs) == len(rows) == 6  # process_docs kept the abstract algebra questions
    for (doc_id, reqs), row in zip(sorted(theirs.items()), sorted(rows, key=lambda x: int(x["idx"]))):
        assert row["prompt"] == reqs[0][0], f"doc {doc_id}"
    # the five fixed shots (B, B, C, A, A) answered after the prefix; the item's turn ends with it
    assert rows[0]["prompt"].count("is one of A, B, C or D. The best answer is") == 6
    assert "The best answer is B.\n\n" in rows[0]["prompt"] and rows[0]["prompt"].endswith("or D. The best answer is")
    task = json.loads((tmp_path / "run" / "results.json").read_text(encoding="utf-8"))["tasks"]["lm_eval.mmlu_de_llama_abstract_algebra"]
    # " B" -> remove_whitespace -> "B" against "B." with lm-eval's regexes_to_ignore: items 1 and 5 of 0..5
    assert task["metrics"]["exact_match"]["value"] == pytest.approx(2 / 6, abs=1e-6)
    assert refused.returncode == 2 and not (tmp_path / "chat" / "journal.sqlite").exists()
    assert "gen_prefix" in refused.stderr and "-M chat=false" in refused.stderr
    assert "-M continue_final_message=true" in refused.stderr


def test_a_server_that_continues_the_final_turn_gets_lm_evals_chat_prompt(tmp_path):
    """``-M continue_final_message=true`` (vLLM's and SGLang's chat API): the chat messages end with the
    prefix as an assistant turn, sent with ``continue_final_message`` and without a generation prompt;
    the messages equal lm-eval's multi-turn chat prompt (``fewshot_context``) on the same records."""
    from lm_eval.api.task import ConfigurableTask

    from glotbench.tasks.lm_eval_import import convert, dump
    from glotbench.testing.servers import start_stub, stop

    _tasks_dir()
    src = CASES["literal"]
    files = _split_files(tmp_path)
    spec, _ = convert(src, language="hu", data_dir="data")
    (tmp_path / "gp.yaml").write_text(dump(spec, "lm.yaml"), encoding="utf-8")
    base, proc = start_stub("--answer", " B", "--log-bodies")
    try:
        r = cli("run", "-m", "vllm:stub", "--base-url", base, "-M", "continue_final_message=true", "-t", "gp.yaml",
                "-o", "run", "--no-progress", "--bootstrap", "0", "--max-retries", "0", cwd=tmp_path)
        assert r.returncode == 0, r.stderr[-2000:]
        bodies = [e["body"] for e in httpx.get(base.replace("/v1", "/_log"), timeout=10).json()["log"]]
    finally:
        stop(proc)
    task = ConfigurableTask(config={**src, "dataset_kwargs": {"data_files": {s: str(p) for s, p in files.items()}}})
    want = [task.fewshot_context(doc, 3, apply_chat_template=True, fewshot_as_multiturn=True,
                                 chat_template=lambda m, add_generation_prompt=True: m, gen_prefix=task.doc_to_prefix(doc))
            for doc in task.eval_docs]
    assert len(bodies) == len(want) == 5
    assert sorted(json.dumps(b["messages"]) for b in bodies) == sorted(json.dumps(w) for w in want)
    assert all(b["continue_final_message"] is True and b["add_generation_prompt"] is False for b in bodies)
    res = json.loads((tmp_path / "run" / "results.json").read_text(encoding="utf-8"))
    assert res["model"]["continue_final_message"] is True


@pytest.mark.slow
def test_hf_chat_template_leaves_the_prefix_open(smollm2_path):
    pytest.importorskip("gguf")
    transformers = pytest.importorskip("transformers")
    from glotbench.models.hf import chat_text

    tok = transformers.AutoTokenizer.from_pretrained(str(smollm2_path.parent), gguf_file=smollm2_path.name)
    msgs = [{"role": "user", "content": "Q?"}, {"role": "assistant", "content": "The best answer is"}]
    text = chat_text(tok, msgs)
    assert text.endswith("assistant\nThe best answer is"), text[-80:]  # ChatML, the turn not closed
    closed = chat_text(tok, msgs[:1])
    assert closed.endswith("<|im_start|>assistant\n") and text.startswith(closed)


@pytest.mark.slow
@pytest.mark.parametrize("prefix", ["The best answer is", "Answer: ", " Válasz:"])
def test_the_embedded_model_leaves_the_prefix_open_as_transformers_does(smollm2_path, prefix):
    """The embedded model renders a final assistant turn open with its GGUF's template (llama-cpp-python's
    Jinja) and transformers' continue_final_message rule: the same text as transformers renders from the
    same GGUF's tokenizer, whitespace at the prefix's ends included."""
    pytest.importorskip("gguf")
    transformers = pytest.importorskip("transformers")
    from glotbench.models.llamacpp import LlamaCppModel

    tok = transformers.AutoTokenizer.from_pretrained(str(smollm2_path.parent), gguf_file=smollm2_path.name)
    model = LlamaCppModel(smollm2_path, n_ctx=512, n_seq=1)
    try:
        msgs = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Q: 2+2?"},
                {"role": "assistant", "content": "The best answer is 4."}, {"role": "user", "content": "Q: 3+3?"},
                {"role": "assistant", "content": prefix}]
        text, add_bos, stops = model.continued_text(msgs)
        assert text == tok.apply_chat_template(msgs, add_generation_prompt=False, continue_final_message=True, tokenize=False)
        assert text.rstrip().endswith(prefix.strip()) and "<|im_end|>" in stops
    finally:
        asyncio.run(model.aclose())


@pytest.mark.slow
def test_llama_german_mmlu_on_the_embedded_chat_model(tmp_path, smollm2_path):
    """The wheel's German MMLU runs on the embedded model as a chat model (no -M chat=false): each answer
    is the greedy continuation of transformers' rendering of lm-eval's chat prompt with the prefix left
    open (llama-cpp-python's completion on those tokens, in the test), and is scored by lm-eval's filters."""
    pytest.importorskip("gguf")
    transformers = pytest.importorskip("transformers")
    import llama_cpp

    tasks_dir = _tasks_dir()
    rel = "llama3/instruct/mmlu_de/mmlu_de_abstract_algebra.yaml"
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "mmlu_de_llama_abstract_algebra_latest.jsonl").write_text(
        "".join(json.dumps(_llama_de(i), ensure_ascii=False) + "\n" for i in range(3)), encoding="utf-8")
    c = cli("tasks", "import", str(tasks_dir / rel), "--lm-eval-hooks", "--data-dir", "data", "--language", "de",
            "-o", "de.yaml", cwd=tmp_path)
    assert c.returncode == 0, c.stderr
    r = cli("run", "-m", "embedded", "-t", "de.yaml", "-o", "run", "--no-progress", "--bootstrap", "0", cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    rows = [json.loads(x) for x in (tmp_path / "run" / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 3 and all(row["prompt"][-1] == {"role": "assistant", "content": "The best answer is"} for row in rows)
    tok = transformers.AutoTokenizer.from_pretrained(str(smollm2_path.parent), gguf_file=smollm2_path.name)
    llm = llama_cpp.Llama(model_path=str(smollm2_path), n_ctx=4096, verbose=False, seed=0)
    for row in rows:
        text = tok.apply_chat_template(row["prompt"], add_generation_prompt=False, continue_final_message=True, tokenize=False)
        out = llm.create_completion(prompt=llm.tokenize(text.encode("utf-8"), add_bos=False, special=True), max_tokens=10,
                                    temperature=0.0, top_k=1, stop=[".", "<|im_end|>"])
        assert row["outputs"][0]["text"] == out["choices"][0]["text"], row["sample_id"]
