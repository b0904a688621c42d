"""lm-eval's ``filter_list`` and ``exact_match`` options through `glotbench tasks import-lm-eval`, on the
task files as shipped in the installed lm-eval wheel: gsm8k (5-shot; strict-match ``#### N`` and
flexible-extract, the last number, with ``regexes_to_ignore`` / ``ignore_case``), gsm8k-cot (the 8 fixed
exemplars; ``The answer is N.``) and triviaqa (``remove_whitespace``; any of the aliases, case and
punctuation ignored). Each is converted and run by the CLI (fresh processes) against the stub, whose
answers are canned per item; every item's filtered answers and exact-match values equal what lm-eval's
own ConfigurableTask gives for the same output texts: its own FilterEnsembles applied to them, then its
own ``process_results``. lm-eval (``pip install --no-deps lm-eval``) with ``datasets`` is needed."""

from __future__ import annotations

import json

import pytest
from test_lm_eval_zoo_import import _tasks_dir, cli

# output texts the model "writes" (no stop sequence of the three tasks inside, so nothing is cut)
GSM_OUTPUTS = ["So 3 + 4 = 7 apples\n#### 7", "The answer is $1,200. Done", "#### -5.5 and later 6",
               "I cannot tell.", "First 12, then 18\n#### 18", "The answer is 18. Or 19?", "#### 2,000", "  ####  3 "]
TRIVIA_OUTPUTS = ["  Paris ", "london", "The Danube", "  sir isaac newton", "MOUNT EVEREST!", "no idea", "Tokyo ",
                  " Ulaanbaatar"]


def _gsm(i: int, split: str) -> dict:
    return {"question": f"Kati has {i} apples ({split} q{i}). How many now?",
            "answer": f"{i} + {i + 2} = {2 * i + 2}\n#### {[7, 1200, -5.5, 3, 18, 18, 2000, 3][i % 8] if split == 'test' else i}"}


def _trivia(i: int, split: str) -> dict:
    aliases = [["Paris", "Paris, France"], ["London"], ["Danube", "The Danube"], ["Isaac Newton", "Sir Isaac Newton"],
               ["Mount Everest"], ["Oslo"], ["Tokyo"], ["Ulan Bator", "Ulaanbaatar"]][i % 8]
    return {"question": f"Which place is number {i} ({split} q{i})", "question_id": f"{split}{i}",
            "question_source": "x", "entity_pages": {}, "search_results": {},
            "answer": {"aliases": aliases, "normalized_aliases": [a.lower() for a in aliases], "value": aliases[0],
                       "normalized_value": aliases[0].lower(), "type": "WikipediaEntity"}}


MMLU_OUTPUTS = ["The answer is (B).", "So it must be (c) here", "Final: the femur", "I pick (A), no, (D)",
                "nothing fits", "The answer is (C) because", "answer: (B) the skull!", "Tibia it is"]


def _mmlu(i: int, split: str) -> dict:  # cais/mmlu's record shape
    return {"question": f"Which bone is number {i} ({split} q{i})?", "subject": "anatomy",
            "choices": ["The skull", "The femur", f"The tibia {i}" if i % 2 else "Tibia", "The rib"], "answer": i % 4}


CASES = {  # lm-eval file, shots, record maker, outputs, conversion flags
    "gsm8k": ("gsm8k/gsm8k.yaml", 5, _gsm, GSM_OUTPUTS, ()),
    "gsm8k_cot": ("gsm8k/gsm8k-cot.yaml", 8, _gsm, GSM_OUTPUTS, ()),
    "triviaqa": ("triviaqa/default.yaml", 0, _trivia, TRIVIA_OUTPUTS, ()),
    # flexible-extract is lm-eval's multi_choice_regex (reads the record's choices): its own class runs it
    "mmlu_flan_cot_zeroshot_anatomy": ("mmlu/flan_cot_zeroshot/mmlu_anatomy.yaml", 0, _mmlu, MMLU_OUTPUTS,
                                       ("--lm-eval-hooks",)),
}


def lm_eval_scores(tasks_dir, rel: str, shots: int, files: dict, texts: dict[int, str]) -> dict[int, tuple[dict, dict]]:
    """doc_id -> ({filter name: filtered answer}, {metric key: value}) from lm-eval's own ConfigurableTask:
    its FilterEnsembles on the given output texts, then its process_results per filter."""
    import os

    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    from lm_eval.api.task import ConfigurableTask
    from lm_eval.tasks._yaml_loader import load_yaml

    cfg = load_yaml(tasks_dir / rel, resolve_func=True)
    cfg.update(dataset_path="json", dataset_name=None, num_fewshot=shots,
               dataset_kwargs={"data_files": {s: str(p) for s, p in files.items()}})
    task = ConfigurableTask(config=cfg)
    task.set_fewshot_seed(1234)
    task.build_all_requests(limit=None, rank=0, world_size=1)
    for inst in task.instances:
        inst.resps = [texts[inst.doc_id]]
    task.apply_filters()
    out = {}
    for inst in task.instances:
        picked = dict(inst.filtered_resps)
        values = {}
        for name, answer in picked.items():
            for metric, v in task.process_results(inst.doc, [answer]).items():
                values[f"{metric},{name}"] = float(v)
        out[inst.doc_id] = (picked, values)
    return out


@pytest.mark.parametrize("task", list(CASES))
def test_filters_and_exact_match_equal_lm_evals(tmp_path, task):
    from glotbench.testing.servers import start_stub, stop

    tasks_dir = _tasks_dir()
    rel, shots, make, outputs, flags = CASES[task]
    n = len(outputs)
    (tmp_path / "data").mkdir()
    files = {}
    for split in ("train", "validation", "test", "dev"):
        files[split] = tmp_path / "data" / f"{task}_{split}.jsonl"
        files[split].write_text("".join(json.dumps(make(i, split)) + "\n" for i in range(n)), encoding="utf-8")
    c = cli("tasks", "import", str(tasks_dir / rel), *flags, "--data-dir", "data", "-o", f"{task}.yaml",
            cwd=tmp_path)
    assert c.returncode == 0, c.stderr
    assert "filter_list" not in c.stderr  # mapped, not a loss any more
    split = "test" if task.startswith("gsm") else "validation"
    (tmp_path / "responses.jsonl").write_text("".join(json.dumps({"match": f"({split} q{i})", "response": out}) + "\n"
                                                      for i, out in enumerate(outputs)), encoding="utf-8")
    base, proc = start_stub("--responses", str(tmp_path / "responses.jsonl"))
    try:
        r = cli("run", "-m", "openai:stub", "--base-url", base, "-M", "chat=false", "-t", f"{task}.yaml", "-o", "run",
                "--no-progress", "--bootstrap", "20", "--max-retries", "0", cwd=tmp_path)
    finally:
        stop(proc)
    assert r.returncode == 0, r.stderr[-2000:]
    recs = {int(x["idx"]): x for x in map(json.loads, (tmp_path / "run" / "samples.jsonl").read_text().splitlines())}
    assert [recs[i]["outputs"][0]["text"] for i in range(n)] == outputs  # the canned answers, uncut
    theirs = lm_eval_scores(tasks_dir, rel, shots, {s: files[s] for s in files}, dict(enumerate(outputs)))
    names = list(theirs[0][0])
    assert len(theirs) == n
    for i, (picked, values) in theirs.items():
        assert recs[i]["extracted"] == picked, f"{task} doc {i}"
        ours = {f"exact_match,{name}": recs[i]["values"]["exact_match" if k == 0 else f"exact_match_{name}"]
                for k, name in enumerate(names)}
        assert ours == values, f"{task} doc {i}"
    scores = [v for _, vals in theirs.values() for v in vals.values()]
    assert 0 < sum(scores) < len(scores)  # some right, some wrong: the comparison can fail both ways
    [entry] = json.loads((tmp_path / "run" / "results.json").read_text())["tasks"].values()
    for k, name in enumerate(names):
        key = "exact_match" if k == 0 else f"mean:exact_match_{name}"
        want = sum(values[f"exact_match,{name}"] for _, values in theirs.values()) / n
        assert entry["metrics"][key]["value"] == pytest.approx(want), key


def test_filter_steps_equal_lm_evals_filter_classes():
    """Each converted step on awkward strings equals lm-eval's own filter class (regex with several
    groups, a group that matched nothing, group_select -1, a fallback; whitespace; case; map)."""
    _tasks_dir()
    from lm_eval.api.registry import get_filter

    from glotbench.tasks.lm_eval_filters import apply_filter

    texts = ["#### 12", "x 3.5 y -4 z", "", "  A  ", "Ünïcode 7,5 €", "(b) or (c)", "no digits", "1\n2\n3"]
    pipelines = [
        [{"function": "regex", "regex_pattern": r"(-?[$0-9.,]{2,})|(-?[0-9]+)", "group_select": -1}],
        [{"function": "regex", "regex_pattern": r"#### (\-?[0-9\.\,]+)"}],
        [{"function": "regex", "regex_pattern": r"\((a|b|c)\)", "group_select": 1, "fallback": "?"}],
        [{"function": "regex", "regex_pattern": r"[0-9]"}],
        [{"function": "remove_whitespace"}, {"function": "lowercase"}],
        [{"function": "uppercase"}, {"function": "map", "mapping_dict": {"  A  ": "yes"}, "default_value": "no"}],
    ]
    for steps in pipelines:
        for text in texts:
            resps: list = [[text]]
            for step in steps:
                resps = list(get_filter(step["function"])(**{k: v for k, v in step.items() if k != "function"})
                             .apply(resps, [{}]))
            want = list(get_filter("take_first")().apply(resps, [{}]))[0]
            assert apply_filter([*steps, {"function": "take_first"}], text) == want, (steps, text)


def test_exact_match_equals_lm_evals_metric():
    _tasks_dir()
    from lm_eval.api.metrics import exact_match_hf_evaluate

    from glotbench.tasks.lm_eval_filters import exact_match

    pairs = [("18", "18"), ("$1,200", "1200"), ("Paris.", "paris"), ("A1", "a2"), ("x #### 5", "5"), ("Ünï", "ünï"),
             ("5.", "5"), ("", ""), ("Ab", "ab ")]
    for opts in [{}, {"ignore_case": True}, {"ignore_punctuation": True, "ignore_numbers": True},
                 {"regexes_to_ignore": [",", "\\$", "(?s).*#### ", "\\.$"], "ignore_case": True}]:
        for pred, ref in pairs:
            assert exact_match(pred, [ref], opts) == exact_match_hf_evaluate([pred], [ref], **opts)["exact_match"]


def test_without_hooks_a_filter_only_lm_eval_runs_is_refused(tmp_path):
    r = cli("tasks", "import", str(_tasks_dir() / "mmlu/flan_cot_zeroshot/mmlu_anatomy.yaml"), "-o", "o.yaml",
            cwd=tmp_path)
    assert r.returncode == 2 and not (tmp_path / "o.yaml").exists()
    assert "filter_list.flexible-extract: function multi_choice_regex not converted" in r.stderr
    assert "--lm-eval-hooks runs it" in r.stderr


@pytest.mark.parametrize("step,cause", [({"function": "majority_vote"}, "function majority_vote not converted"),
                                        ({"function": "regex", "regex_pattern": "x", "flags": 2}, "options flags"),
                                        ({"function": "regex", "regex_pattern": "x"}, "does not end with take_first")])
def test_a_filter_that_cannot_be_restated_is_refused(tmp_path, step, cause):
    import yaml

    src = {"task": "f", "dataset_path": "x", "output_type": "generate_until", "test_split": "test",
           "doc_to_text": "{{q}}", "doc_to_target": "{{a}}",
           "filter_list": [{"name": "one", "filter": [step] + ([{"function": "take_first"}] if "take_first" not in cause
                                                              else [])}]}
    (tmp_path / "f.yaml").write_text(yaml.safe_dump(src), encoding="utf-8")
    r = cli("tasks", "import", "f.yaml", "-o", "out.yaml", cwd=tmp_path)
    assert r.returncode == 2 and not (tmp_path / "out.yaml").exists()
    [line] = r.stderr.strip().splitlines()
    assert cause in line and "filter_list.one" in line


def test_the_regex_extractor_picks_as_lm_evals_regex_filter():
    """glotbench's own ``regex`` extractor (any task YAML can name it): the pick of lm-eval's filter
    on the answer with thinking removed; None (unparsed) where lm-eval writes its fallback."""
    from glotbench.errors import TaskSpecError
    from glotbench.extract import get_extractor

    fn = get_extractor("regex")
    pattern = r"(-?[$0-9.,]{2,})|(-?[0-9]+)"
    assert fn("<think>#### 99</think>So 12, then 18.", sample={}, pack="en", pattern=pattern, group_select=-1) == "18."
    assert fn("So 12, then 18", sample={}, pack="en", pattern=pattern) == "12,"
    assert fn("none here", sample={}, pack="en", pattern=pattern) is None
    assert fn("a 1", sample={}, pack="en", pattern=r"\d", group_select=3) is None  # past the matches: unparsed
    for bad in ({}, {"pattern": "(", "group_select": 0}, {"pattern": "x", "flags": 1}):
        with pytest.raises(TaskSpecError, match="extractor 'regex'"):
            fn("x", sample={}, pack="en", **bad)
