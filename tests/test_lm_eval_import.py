"""`glotbench tasks import-lm-eval`: three task YAMLs from lm-eval's own repository (tests/fixtures/
lm_eval_tasks: arc_easy multiple choice, triviaqa generate-until, gsm8k generate-until 5-shot) convert,
say what they could not convert, and run against small local data in each dataset's record format
with the stub server; the first item's prompt equals the one lm-eval's --write_out prints.

lm-eval's side of the prompt is built from lm-eval's own pieces (installed with --no-deps):
``lm_eval.utils.apply_template`` for doc_to_text / doc_to_target / doc_to_choice,
``lm_eval.api.samplers.ContextSampler(rnd=1234)`` for the shots (``--fewshot_seed`` 1234, the default)
and ``lm_eval.api.utils.Message.to_text``, assembled as ``ConfigurableTask.fewshot_context`` and
``build_qa_turn`` do (restated: ``description``, then per shot ``text + target_delimiter`` and
``answer + fewshot_delimiter``, then the item's text)."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

FIX = Path(__file__).parent / "fixtures" / "lm_eval_tasks"
SRC = str(Path(__file__).resolve().parents[1] / "src")


def cli(*args: str, cwd) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": SRC}
    return subprocess.run([sys.executable, "-m", "glotbench", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)


def records(name: str) -> list[dict]:
    return [json.loads(x) for x in (FIX / "data" / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    from glotbench.testing.servers import start_stub, stop

    tmp = tmp_path_factory.mktemp("lmeval_import")
    shutil.copytree(FIX / "data", tmp / "data")
    notes = {}
    for t in ("arc_easy", "triviaqa", "gsm8k"):
        r = cli("tasks", "import", str(FIX / f"{t}.yaml"), "--data-dir", "data", "-o", f"{t}.yaml", cwd=tmp)
        assert r.returncode == 0, r.stderr
        notes[t] = r.stderr
    base, proc = start_stub("--answer", "Mars")  # echoes log-probabilities for --mode loglikelihood
    runs = {}
    try:
        for t, extra in (("arc_easy", ["--mode", "loglikelihood", "-M", "logprobs_trusted=true"]),
                         ("triviaqa", ["-M", "chat=false"]), ("gsm8k", ["-M", "chat=false"])):
            r = cli("run", "-m", "openai:stub", "--base-url", base, "-t", f"{t}.yaml", *extra, "-o", f"run_{t}",
                    "--no-progress", "--bootstrap", "20", "--max-retries", "0", cwd=tmp)
            assert r.returncode == 0, r.stderr[-2000:]
            runs[t] = tmp / f"run_{t}"
    finally:
        stop(proc)
    return tmp, notes, runs


def _samples(run: Path) -> list[dict]:
    return sorted((json.loads(x) for x in (run / "samples.jsonl").read_text().splitlines()), key=lambda r: r["idx"])


def lm_eval_first_prompt(task_yaml: str, eval_docs: list[dict], shot_docs: list[dict]) -> str:
    """What lm-eval's --write_out prints as the first document's prompt (plain text, no chat template)."""
    utils = pytest.importorskip("lm_eval.utils", reason="pip install --no-deps lm-eval")
    from lm_eval.api.samplers import ContextSampler
    from lm_eval.api.utils import Message

    cfg = yaml.safe_load((FIX / task_yaml).read_text())
    tgt, few = cfg.get("target_delimiter", " "), cfg.get("fewshot_delimiter", "\n\n")

    def text(d):
        return utils.apply_template(cfg["doc_to_text"], d)

    def answer(d):
        a = utils.apply_template(cfg["doc_to_target"], d)
        if a.isdigit() and "doc_to_choice" in cfg:
            return ast.literal_eval(utils.apply_template(cfg["doc_to_choice"], d))[int(a)]
        if a.startswith("[") and a.endswith("]"):
            return ast.literal_eval(a)[0]
        return a

    msgs = [Message("system", cfg["description"])] if cfg.get("description") else []
    n = int(cfg.get("num_fewshot") or 0)
    for shot in (ContextSampler(shot_docs, rnd=1234).sample(n) if n else []):
        msgs += [Message("user", text(shot), tgt), Message("assistant", answer(shot), few)]
    msgs.append(Message("user", text(eval_docs[0]), ""))
    return "".join(m.to_text() for m in msgs)


def test_conversion_says_what_it_left_out(converted):
    tmp, notes, _ = converted
    # filter_list and exact_match's options are mapped (tests/test_lm_eval_filters.py), not named as losses
    assert "filter_list" not in notes["gsm8k"] + notes["triviaqa"] and "regexes_to_ignore" not in notes["gsm8k"]
    assert "--mode loglikelihood" in notes["arc_easy"] and "not converted" not in notes["arc_easy"]
    task = yaml.safe_load((tmp / "gsm8k.yaml").read_text())
    assert [f["name"] for f in task["options"]["filters"]] == ["strict-match", "flexible-extract"]
    assert task["metrics"] == ["exact_match", "mean:exact_match_flexible-extract"]
    assert task["options"]["exact_match"]["regexes_to_ignore"] == [",", "\\$", "(?s).*#### ", "\\.$"]
    assert task["fewshot"] == {"split": "train", "n": 5, "seed": 1234}
    assert task["dataset"]["eval_split"] == "test" and task["generation"]["stop"] == ["Question:", "</s>", "<|im_end|>"]
    hub = cli("tasks", "import", str(FIX / "arc_easy.yaml"), cwd=tmp)  # the Hub form, printed
    spec = yaml.safe_load(hub.stdout)
    assert spec["dataset"]["hf"] == {"id": "allenai/ai2_arc", "revision": "main", "config": "ARC-Easy"}
    assert "dataset revision" in hub.stderr


@pytest.mark.parametrize("task,eval_split,shot_split", [("gsm8k", "test", "train"), ("triviaqa", "validation", "train"),
                                                        ("arc_easy", "test", "train")])
def test_first_prompt_is_lm_evals(converted, task, eval_split, shot_split):
    _, _, runs = converted
    shots = records(f"{task}_{shot_split}") if (FIX / "data" / f"{task}_{shot_split}.jsonl").exists() else []
    want = lm_eval_first_prompt(f"{task}.yaml", records(f"{task}_{eval_split}"), shots)
    first = _samples(runs[task])[0]
    assert first["prompt"] == want
    if task == "gsm8k":
        assert want.count("Question:") == 6  # five shots and the item


def test_scores_follow_lm_evals_targets(converted):
    _, _, runs = converted
    arc = _samples(runs["arc_easy"])
    docs = records("arc_easy_test")
    for rec, doc in zip(arc, docs):
        assert rec["gold"] == str(doc["choices"]["label"].index(doc["answerKey"]))  # lm-eval's target: the index
        lls = rec["extracted"]["logprobs"]
        pred = max(range(len(lls)), key=lambda k: lls[k])  # lm-eval: argmax of the log-likelihoods
        assert rec["values"]["correct"] == float(str(pred) == rec["gold"])
    trivia = _samples(runs["triviaqa"])
    assert [r["values"]["exact_match"] for r in trivia] == [1.0, 0.0]  # "Mars" is an alias of the first only
    assert trivia[0]["gold"] == ["Mars", "Planet Mars"]
