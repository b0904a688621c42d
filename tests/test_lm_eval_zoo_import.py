"""`glotbench tasks import-lm-eval` on lm-eval's own multilingual task files, as shipped inside the
installed lm-eval wheel (lm_eval/tasks/...): belebele_ces_Latn (5-shot, ``fewshot_config.sampler:
first_n`` from the test split itself), xnli_de (2-shot, lm-eval's random sampler), m_mmlu_hu (5-shot
``first_n`` from train, ``include:`` + ``tag:``) and xstorycloze_ru (``include:`` of another language's
file, the child's keys winning). Each is converted by the CLI (a fresh process), run against the stub
server in --mode loglikelihood on local records in the dataset's record shape, exported with
``export --format lm-eval``, and every item's prompt and every option continuation are compared with
what lm-eval's own ``ConfigurableTask.build_all_requests`` builds on the same records (built from the
same YAML by lm-eval's loader, ``dataset_path`` pointed at the local JSON files, fewshot seed 1234 as
lm-eval's default). Tasks that could not run as lm-eval runs them (paws-x's ``process_docs``,
xcopa's ``!function`` prompts, a group file) are refused: no file, exit 2, one line naming the cause.
lm-eval (``pip install --no-deps lm-eval``) with ``datasets`` is needed; without them the tests skip."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = str(Path(__file__).resolve().parents[1] / "src")
N = 8


def _tasks_dir() -> Path:
    lm_eval = pytest.importorskip("lm_eval", reason="pip install --no-deps lm-eval")
    pytest.importorskip("datasets")
    return Path(lm_eval.__file__).parent / "tasks"


def cli(*args: str, cwd) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": SRC}
    return subprocess.run([sys.executable, "-m", "glotbench", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)


def _belebele(i: int) -> dict:
    return {"link": f"https://x/{i}", "question_number": i, "flores_passage": f"Pasáž číslo {i}. Žluťoučký kůň.",
            "question": f" Co je v pasáži {i}? ", "mc_answer1": f"první {i}", "mc_answer2": "druhá", "mc_answer3": "třetí",
            "mc_answer4": "čtvrtá", "correct_answer_num": str(1 + i % 4), "dialect": "ces_Latn", "ds": "2023"}


def _xnli(i: int) -> dict:
    return {"premise": f"Der Hund {i} schläft", "hypothesis": f"Ein Tier {i} ruht", "label": i % 3}


def _mmlu(i: int, split: str) -> dict:
    return {"id": f"{split}/{i}", "instruction": f"  Melyik a helyes válasz ({split} {i})? ", "option_a": "alma",
            "option_b": "körte", "option_c": f"szilva {i}", "option_d": "dió", "answer": "ABCD"[i % 4]}


def _story(i: int) -> dict:
    return {"story_id": f"s{i}", "input_sentence_1": f"Маша {i} пошла.", "input_sentence_2": "Было тепло.",
            "input_sentence_3": "Она шла.", "input_sentence_4": "Пришла домой.", "sentence_quiz1": "Она отдохнула.",
            "sentence_quiz2": f"Она улетела {i}.", "answer_right_ending": 1 + i % 2}


# task file (relative to lm_eval/tasks), glotbench name, language, shots, {split: records}
CASES = {
    "belebele_ces_Latn": ("belebele/belebele_ces_Latn.yaml", "cs", 5, {"test": [_belebele(i) for i in range(N)]}),
    "xnli_de": ("xnli/xnli_de.yaml", "de", 2, {"train": [_xnli(i + 100) for i in range(N)],
                                              "validation": [_xnli(i) for i in range(N)]}),
    "m_mmlu_hu": ("okapi/mmlu_multilingual/m_mmlu_hu.yaml", "hu", 5, {"train": [_mmlu(i, "train") for i in range(N)],
                                                                      "test": [_mmlu(i, "test") for i in range(N)]}),
    "xstorycloze_ru": ("xstorycloze/default_ru.yaml", "ru", 0, {"train": [_story(i + 50) for i in range(N)],
                                                               "eval": [_story(i) for i in range(N)]}),
}


def lm_eval_requests(tasks_dir: Path, rel: str, shots: int, files: dict[str, Path]) -> dict[int, list[tuple[str, str]]]:
    """doc_id -> [(context, continuation) per option] as lm-eval's ConfigurableTask builds them."""
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    from lm_eval.api.task import ConfigurableTask
    from lm_eval.tasks._yaml_loader import load_yaml

    cfg = load_yaml(tasks_dir / rel, resolve_func=True)
    cfg.update(dataset_path="json", dataset_name=None, num_fewshot=shots,
               dataset_kwargs={"data_files": {s: str(p) for s, p in files.items()}})
    task = ConfigurableTask(config=cfg)
    task.set_fewshot_seed(1234)  # lm-eval's default --fewshot_random_seed
    task.build_all_requests(limit=None, rank=0, world_size=1)
    out: dict[int, list] = {}
    for inst in sorted(task.instances, key=lambda x: (x.doc_id, x.idx)):
        out.setdefault(inst.doc_id, []).append(tuple(inst.arguments))
    return out


@pytest.fixture(scope="module")
def zoo(tmp_path_factory):
    from glotbench.testing.servers import start_stub, stop

    tasks_dir = _tasks_dir()
    tmp = tmp_path_factory.mktemp("zoo")
    (tmp / "data").mkdir()
    out = {}
    base, proc = start_stub("--answer", "A")
    try:
        for task, (rel, lang, shots, splits) in CASES.items():
            files = {}
            for split, recs in splits.items():
                files[split] = tmp / "data" / f"{task}_{split}.jsonl"
                files[split].write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs), encoding="utf-8")
            c = cli("tasks", "import", str(tasks_dir / rel), "--data-dir", "data", "--language", lang,
                    "-o", f"{task}.yaml", cwd=tmp)
            assert c.returncode == 0, c.stderr
            r = cli("run", "-m", "openai:stub", "--base-url", base, "-M", "logprobs_trusted=true", "--mode",
                    "loglikelihood", "-t", f"{task}.yaml", "--num-fewshot", str(shots), "-o", f"run_{task}",
                    "--no-progress", "--bootstrap", "20", "--max-retries", "0", cwd=tmp)
            assert r.returncode == 0, r.stderr[-2000:]
            e = cli("runs", "export", f"run_{task}", "--format", "lm-eval", "-o", f"lm_{task}", cwd=tmp)
            assert e.returncode == 0, e.stderr
            [samples] = list((tmp / f"lm_{task}").glob("*/samples_*.jsonl"))
            lines = sorted((json.loads(x) for x in samples.read_text().splitlines()), key=lambda x: x["doc_id"])
            ours = {x["doc_id"]: [(a["arg_0"], a["arg_1"]) for a in x["arguments"].values()] for x in lines}
            out[task] = (ours, lm_eval_requests(tasks_dir, rel, shots, files), c.stderr,
                         (tmp / f"{task}.yaml").read_text(encoding="utf-8"))
    finally:
        stop(proc)
    return out


@pytest.mark.parametrize("task", list(CASES))
def test_prompts_and_continuations_equal_lm_evals(zoo, task):
    ours, theirs, _, _ = zoo[task]
    assert len(ours) == len(theirs) == N
    for doc_id in theirs:
        assert ours[doc_id] == theirs[doc_id], f"{task} doc {doc_id}"
    shots = CASES[task][2]
    if shots:  # the shots are there: the first prompt holds n + 1 questions
        marker = {"belebele_ces_Latn": "\nQ: ", "m_mmlu_hu": "\nA. alma", "xnli_de": None}[task]
        if marker:
            assert theirs[0][0][0].count(marker) == shots + 1


def test_first_n_shots_are_the_splits_first_records(zoo):
    """m_mmlu_hu: lm-eval's first_n gives every item the same five train records, in order."""
    ours, _, _, text = zoo["m_mmlu_hu"]
    ctx = ours[3][0][0]
    for i in range(5):
        assert f"(train {i})" in ctx
    assert "(train 5)" not in ctx
    assert ctx.index("(train 0)") < ctx.index("(train 4)") < ctx.index("(test 3)")
    import yaml

    spec = yaml.safe_load(text)
    assert spec["options"]["fewshot_sampler"] == "first_n" and spec["suites"] == ["lm_eval.m_mmlu"]
    assert spec["dataset"]["eval_split"] == "test" and spec["fewshot"]["split"] == "train"
    # belebele draws its shots from the test split itself: the item is left out of its own shots
    bele, _, _, _ = zoo["belebele_ces_Latn"]
    assert "Pasáž číslo 0." not in bele[0][0][0].rsplit("P: ", 1)[0] and "Pasáž číslo 5." in bele[0][0][0]
    assert "Pasáž číslo 0." in bele[1][0][0]


def test_include_child_keys_win(zoo):
    """xstorycloze_ru includes default_ar.yaml: the Russian file's task and dataset_name win."""
    import yaml

    _, _, _, text = zoo["xstorycloze_ru"]
    spec = yaml.safe_load(text)
    assert spec["name"] == "lm_eval.xstorycloze_ru" and spec["dataset"]["eval_split"] == "eval"
    tasks_dir = _tasks_dir()
    from glotbench.tasks.lm_eval_import import load_lm_eval_yaml

    merged = load_lm_eval_yaml(tasks_dir / "xstorycloze" / "default_ru.yaml")
    assert merged["dataset_name"] == "ru" and merged["task"] == "xstorycloze_ru" and "include" not in merged


def _same_as_lm_evals_loader(path: Path) -> None:
    from lm_eval.tasks._yaml_loader import load_yaml

    from glotbench.tasks.lm_eval_import import _Function, load_lm_eval_yaml

    def norm(x):  # lm-eval's loader (resolve_func=False) gives a !function as "<its file's folder>/<module.fn>"
        if isinstance(x, _Function):
            return str(x.base / x[len("!function "):])
        if isinstance(x, dict):
            return {k: norm(v) for k, v in x.items()}
        if isinstance(x, list):
            return [norm(v) for v in x]
        return x

    assert norm(load_lm_eval_yaml(path)) == load_yaml(path, resolve_func=False), path


@pytest.mark.parametrize("family", ["belebele", "xnli", "okapi", "xcopa", "xstorycloze", "paws-x", "mgsm", "xwinograd",
                                    "cmmlu", "bigbench/multiple_choice"])
def test_include_chains_merge_as_lm_evals_loader(family):
    """Every YAML of these families (include lists, chains across folders, !function hooks in included
    files): the merged keys equal lm-eval's own loader's (bench/lmeval_zoo.py checks the whole tree)."""
    tasks_dir = _tasks_dir()
    files = sorted((tasks_dir / family).rglob("*.yaml"))
    assert files
    for p in files[:80]:
        _same_as_lm_evals_loader(p)


@pytest.mark.parametrize("rel,cause", [
    ("paws-x/paws_de.yaml", "process_docs"),
    ("xcopa/default_et.yaml", "doc_to_text: !function utils.doc_to_text_et"),
    ("xstorycloze/_xstorycloze.yaml", "a group file"),
])
def test_what_cannot_run_is_not_written(tmp_path, rel, cause):
    tasks_dir = _tasks_dir()
    r = cli("tasks", "import", str(tasks_dir / rel), "-o", "out.yaml", cwd=tmp_path)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and cause in lines[0] and "not converted" in lines[0], r.stderr
    assert not (tmp_path / "out.yaml").exists()
    printed = cli("tasks", "import", str(tasks_dir / rel), cwd=tmp_path)  # nor printed as a task
    assert printed.returncode == 2 and printed.stdout == ""


def test_all_converts_a_tree_into_a_package_with_a_table(tmp_path):
    """`--all DIR -o PKG`: every task file below DIR, one benchmark package; the group file becomes a
    suite of the converted tasks; refused files (paws-x de/en/es/fr: process_docs) are in the table and
    not written (lm-eval's ja/ko/zh files have no process_docs: they convert, as lm-eval runs them)."""
    import shutil

    tasks_dir = _tasks_dir()
    tree = tmp_path / "tree"
    for fam in ("xstorycloze", "paws-x"):
        shutil.copytree(tasks_dir / fam, tree / fam, ignore=shutil.ignore_patterns("__pycache__"))
    r = cli("tasks", "import", "--all", str(tree), "-o", "pkg", "--name", "zoo", "--data-dir", "data",
            cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "14 converted, 4 refused, 2 group file(s) as suites" in r.stdout
    rows = [line for line in r.stdout.splitlines() if "paws_" in line and "refused" in line]
    assert len(rows) == 4 and all("process_docs" in line for line in rows)
    written = sorted(p.name for p in (tmp_path / "pkg" / "src" / "zoo" / "tasks").glob("*.yaml"))
    assert written == sorted([f"xstorycloze_{lang}.yaml" for lang in
                              ("ar", "en", "es", "eu", "hi", "id", "my", "ru", "sw", "te", "zh")]
                             + [f"paws_{lang}.yaml" for lang in ("ja", "ko", "zh")])
    assert (tmp_path / "pkg" / "pyproject.toml").is_file() and (tmp_path / "pkg" / "src" / "zoo" / "__init__.py").is_file()
    env_path = str(tmp_path / "pkg" / "src" / "zoo" / "tasks")
    listed = subprocess.run([sys.executable, "-m", "glotbench", "tasks", "--json"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=300,
                            env={**os.environ, "NO_COLOR": "1", "PYTHONPATH": SRC, "GLOTBENCH_TASKS_PATH": env_path})
    assert listed.returncode == 0, listed.stderr
    suites = json.loads(listed.stdout)["suites"]
    assert len(suites["lm_eval.xstorycloze"]) == 11
    assert sorted(suites["lm_eval.pawsx"]) == ["lm_eval.paws_ja", "lm_eval.paws_ko", "lm_eval.paws_zh"]


def test_gsm8k_cot_gets_lm_evals_eight_fixed_exemplars(tmp_path):
    """gsm8k-cot.yaml: ``fewshot_config`` (``sampler: first_n`` over eight fixed ``samples``), 8-shot,
    generate_until. The shots come from the YAML itself, not from a split: every prompt equals the
    context lm-eval's ConfigurableTask builds (its answer filters: tests/test_lm_eval_filters.py)."""
    from glotbench.testing.servers import start_stub, stop

    tasks_dir = _tasks_dir()
    (tmp_path / "data").mkdir()
    recs = [{"question": f"Kati has {i} apples and buys {i + 2} more. How many now?",
             "answer": f"{i} + {i + 2} = {2 * i + 2}\n#### {2 * i + 2}"} for i in range(N)]
    files = {}
    for split in ("train", "test"):
        files[split] = tmp_path / "data" / f"gsm8k_cot_{split}.jsonl"
        files[split].write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    rel = "gsm8k/gsm8k-cot.yaml"
    c = cli("tasks", "import", str(tasks_dir / rel), "--data-dir", "data", "-o", "gsm8k_cot.yaml", cwd=tmp_path)
    assert c.returncode == 0, c.stderr
    assert "filter_list" not in c.stderr  # the answer filters are mapped (tests/test_lm_eval_filters.py)
    base, proc = start_stub("--answer", "The answer is 6.")
    try:
        r = cli("run", "-m", "openai:stub", "--base-url", base, "-M", "chat=false", "-t", "gsm8k_cot.yaml", "-o", "run",
                "--no-progress", "--bootstrap", "20", "--max-retries", "0", cwd=tmp_path)
    finally:
        stop(proc)
    assert r.returncode == 0, r.stderr[-2000:]
    theirs = lm_eval_requests(tasks_dir, rel, 8, {"test": files["test"], "train": files["train"]})
    ours = {json.loads(x)["idx"]: json.loads(x)["prompt"]
            for x in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()}
    assert len(ours) == len(theirs) == N
    for doc_id, reqs in theirs.items():
        assert ours[doc_id] == reqs[0][0], f"doc {doc_id}"
    assert ours[0].count("Q: ") == 9 and "There are 15 trees in the grove" in ours[0]


def test_a_shot_with_an_empty_answer_is_rendered_as_lm_eval_renders_it(tmp_path, monkeypatch):
    """lm-eval's build_qa_turn: a shot whose answer renders empty gets neither delimiter in a plain
    prompt, and no assistant turn in a multi-turn chat prompt (mgsm's cot files hit this)."""
    _tasks_dir()
    import yaml
    from lm_eval.api.task import ConfigurableTask

    from glotbench.tasks.lm_eval_import import convert, dump
    from glotbench.tasks.registry import resolve

    src = {"task": "empty_answers", "dataset_path": "json", "output_type": "generate_until", "test_split": "test",
           "fewshot_split": "train", "doc_to_text": "Q: {{q}}\nA:", "doc_to_target": "{{a}}", "num_fewshot": 3,
           "description": "Answer.\n\n"}
    (tmp_path / "data").mkdir()
    files = {}
    for split in ("train", "test"):
        files[split] = tmp_path / "data" / f"empty_answers_{split}.jsonl"
        files[split].write_text("".join(json.dumps({"q": f"{split} {i}?", "a": "" if i % 2 else f"ans {i}"}) + "\n"
                                        for i in range(6)), encoding="utf-8")
    (tmp_path / "lm.yaml").write_text(yaml.safe_dump(src), encoding="utf-8")
    spec, problems = convert(src, language="en", data_dir="data")
    (tmp_path / "ours.yaml").write_text(dump(spec, "lm.yaml"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    [ours] = resolve([str(tmp_path / "ours.yaml")])
    cfg = {**src, "dataset_kwargs": {"data_files": {s: str(p) for s, p in files.items()}}}
    plain_task, chat_task = ConfigurableTask(config=dict(cfg)), ConfigurableTask(config=dict(cfg))
    for t in (plain_task, chat_task):  # one sampler each: every call draws from the task's one Random(1234)
        t.set_fewshot_seed(1234)
    seen = []
    for s, doc in zip(ours.samples(), plain_task.eval_docs):
        plain = plain_task.fewshot_context(doc, 3)
        chat = chat_task.fewshot_context(doc, 3, apply_chat_template=True, fewshot_as_multiturn=True,
                                         chat_template=lambda msgs, add_generation_prompt=True: msgs)
        assert ours.plain_prompt(s, 3) == plain
        assert ours.chat_messages(s, 3) == chat
        seen.append(sum(m["role"] == "assistant" for m in chat))
    assert min(seen) < 3  # some shot had an empty answer, so fewer answer turns than shots


def _xcopa(i: int) -> dict:
    return {"premise": f"Mees {i} jäi haigeks.", "choice1": f"Ta sõi {i} seeni.", "choice2": "Ta jooksis.",
            "question": "cause" if i % 2 else "effect", "label": i % 2, "idx": i}


def _paws(i: int) -> dict:
    return {"id": i, "sentence1": f"Der Satz ( {i} ) ist gut .", "sentence2": f"Dieser Satz {i} ist \" gut \" .",
            "label": i % 2}


def _hellaswag(i: int) -> dict:  # Rowan/hellaswag's record shape (label a string; [title] and [step] marks)
    return {"ind": i, "activity_label": f"Removing ice {i}", "ctx_a": f"A man [title] kneels  on a car {i}.",
            "ctx_b": "then, he", "ctx": "", "endings": [f"scrapes the ice [step] off {i}.", " drives away. ",
                                                          "sings [header] loudly.", "eats  snow."],
            "source_id": f"wikihow~{i}", "split": "val", "split_type": "indomain", "label": str(i % 4)}


def _xwinograd(i: int) -> dict:  # Muennighoff/xwinograd's record shape: the blank "_" and two fillers
    return {"sentence": f"Маша {i} не дала Ане книгу, потому что _ была занята.", "option1": "Маша",
            "option2": f"Аня {i}", "answer": "12"[i % 2]}


HOOK_CASES = {
    "xwinograd_ru": ("xwinograd/xwinograd_ru.yaml", "ru", 0, {"test": [_xwinograd(i) for i in range(N)]}),
    "hellaswag": ("hellaswag/hellaswag.yaml", "en", 2, {"train": [_hellaswag(i + 50) for i in range(N)],
                                                        "validation": [_hellaswag(i) for i in range(N)]}),
    "xcopa_et": ("xcopa/default_et.yaml", "et", 0, {"test": [_xcopa(i) for i in range(N)],
                                                    "validation": [_xcopa(i + 50) for i in range(N)]}),
    "paws_de": ("paws-x/paws_de.yaml", "de", 2, {"train": [_paws(i + 50) for i in range(N)],
                                                 "validation": [_paws(i + 80) for i in range(N)],
                                                 "test": [_paws(i) for i in range(N)]}),
}


@pytest.mark.parametrize("task", list(HOOK_CASES))
def test_lm_eval_hooks_delegated_give_lm_evals_prompts(tmp_path, task):
    """--lm-eval-hooks: xcopa's !function doc_to_text / doc_to_choice, xwinograd's (lm-eval's multiple
    input: doc_to_text gives the gold filler's index), paws-x's and hellaswag's
    process_docs (hellaswag's rewrites every record: query, choices, gold) run as
    lm-eval's own code (recorded in the task with lm-eval's version); every prompt and continuation of
    the run equals ConfigurableTask's. Without the flag the same files are refused (tested above)."""
    import yaml

    from glotbench.testing.servers import start_stub, stop

    tasks_dir = _tasks_dir()
    rel, lang, shots, splits = HOOK_CASES[task]
    (tmp_path / "data").mkdir()
    files = {}
    for split, recs in splits.items():
        files[split] = tmp_path / "data" / f"{task}_{split}.jsonl"
        files[split].write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs), encoding="utf-8")
    c = cli("tasks", "import", str(tasks_dir / rel), "--lm-eval-hooks", "--data-dir", "data", "--language", lang,
            "-o", f"{task}.yaml", cwd=tmp_path)
    assert c.returncode == 0, c.stderr
    spec = yaml.safe_load((tmp_path / f"{task}.yaml").read_text(encoding="utf-8"))
    import importlib.metadata

    assert spec["options"]["lm_eval_version"] == importlib.metadata.version("lm-eval")
    assert all("lm_eval_dir" in ref for ref in spec["options"]["lm_eval_hooks"].values())  # no machine paths
    base, proc = start_stub("--answer", "A")
    try:
        r = cli("run", "-m", "openai:stub", "--base-url", base, "-M", "logprobs_trusted=true", "--mode", "loglikelihood",
                "-t", f"{task}.yaml", "--num-fewshot", str(shots), "-o", "run", "--no-progress", "--bootstrap", "20",
                "--max-retries", "0", cwd=tmp_path)
    finally:
        stop(proc)
    assert r.returncode == 0, r.stderr[-2000:]
    e = cli("runs", "export", "run", "--format", "lm-eval", "-o", "lm", cwd=tmp_path)
    assert e.returncode == 0, e.stderr
    [samples] = list((tmp_path / "lm").glob("*/samples_*.jsonl"))
    ours = {x["doc_id"]: [(a["arg_0"], a["arg_1"]) for a in x["arguments"].values()]
            for x in map(json.loads, samples.read_text().splitlines())}
    theirs = lm_eval_requests(tasks_dir, rel, shots, files)
    assert len(ours) == len(theirs) == N
    for doc_id in theirs:
        assert ours[doc_id] == theirs[doc_id], f"{task} doc {doc_id}"
    if task == "xwinograd_ru":  # lm-eval's multiple input: one context per filler, the same continuation
        assert ours[1] == [("Маша 1 не дала Ане книгу, потому что Маша", " была занята."),
                           ("Маша 1 не дала Ане книгу, потому что Аня 1", " была занята.")]
        golds = {int(x["idx"]): x["gold"] for x in map(json.loads, (tmp_path / "run" / "samples.jsonl").read_text().splitlines())}
        assert golds == {i: str(int(_xwinograd(i)["answer"]) - 1) for i in range(N)}  # lm-eval's gold: doc_to_text
    if task == "hellaswag":  # lm-eval's preprocess ran: [title] -> ". ", brackets dropped, gold from label
        context, first = ours[1][0]
        assert context.endswith("Removing ice 1: A man. kneels on a car 1. Then, he") and first == " scrapes the ice off 1."
        assert "[" not in context and len(ours[1]) == 4


def test_lm_eval_hooks_without_lm_eval_is_one_line(tmp_path):
    tasks_dir = _tasks_dir()
    code = ("import sys; sys.modules['lm_eval'] = None  # the package is absent\n"
            "sys.argv = ['glotbench'] + sys.argv[1:]\nfrom glotbench.cli import main\nmain()")
    r = subprocess.run([sys.executable, "-c", code, "tasks", "import", str(tasks_dir / "xcopa" / "default_et.yaml"),
                        "--lm-eval-hooks", "-o", "out.yaml"], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                       env={**os.environ, "NO_COLOR": "1", "PYTHONPATH": SRC})
    assert r.returncode == 2
    [line] = r.stderr.strip().splitlines()
    assert "lm_eval package is not importable" in line and not (tmp_path / "out.yaml").exists()
