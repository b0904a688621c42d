"""Names in a task file resolve when the task loads, in a fresh process, before any request.

Each CLI call here is a fresh subprocess (no module imported by pytest can help it), against the
stub OpenAI server whose ``/_log`` shows how many requests arrived.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import httpx
import pytest

SRC = str(Path(__file__).resolve().parents[1] / "src")
BENCHMARK_PACKAGES = ("glotbench.benchmarks.openhueval", "glotbench.benchmarks.hulu", "glotbench.benchmarks.factuality", "glotbench.benchmarks.czech_bench")

QA_ROWS = [
    {"id": "q1", "question": "Kde je Karlův most? GOLD=Praze", "answers": ["Praha"]},
    {"id": "q2", "question": "Jaké město? GOLD=Brno.", "answers": ["Brno", "město Brno"]},
    {"id": "q3", "question": "Kdo? GOLD=-", "answers": []},
    {"id": "q4", "question": "Co? GOLD=Vltava", "answers": ["Labe"]},
]


def _env(extra_path: Path | None = None) -> dict:
    paths = [SRC] + ([str(extra_path)] if extra_path else []) + [os.environ.get("PYTHONPATH", "")]
    return {**os.environ, "OPENAI_API_KEY": "x", "PYTHONPATH": os.pathsep.join(p for p in paths if p)}


def _glotbench(*args: str, extra_path: Path | None = None, timeout: int = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "glotbench", *args], env=_env(extra_path), capture_output=True,
                          text=True, timeout=timeout)


def _n_requests(base: str) -> int:
    return len(httpx.get(base.replace("/v1", "/_log")).json()["log"])


def _qa_task(folder: Path, **over: str) -> Path:
    """A user-folder extractive-QA task (data + YAML, no Python) answered by the echoing stub."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "qa.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in QA_ROWS), encoding="utf-8")
    fields = {
        "extractor": "{name: text, options: {first_line: true}}",
        "scorer": "extractive_qa",
        "scorer_options": "{profile: glotbench}",
        "metrics": "[exact_match, bow_f1, exact_match_raw, bow_f1_raw, exact_match_lemma, bow_f1_lemma, no_answer_accuracy]",
        "task_class": "null",
    }
    fields.update(over)
    yaml = textwrap.dedent(f"""\
        name: my.qa
        version: "1.0"
        language: cs
        dataset: {{format: jsonl, splits: {{test: {folder / 'qa.jsonl'}}}}}
        fields: {{id: id, question: question, target: answers}}
        output_type: generate
        prompt: {{user: "{{{{ question }}}}"}}
        """) + "".join(f"{k}: {v}\n" for k, v in fields.items())
    path = folder / "qa.yaml"
    path.write_text(yaml, encoding="utf-8")
    return path


@pytest.mark.parametrize("field, value, message", [
    ("extractor", "{name: textt}", "field 'extractor.name': unknown extractor 'textt'"),
    ("scorer", "exact_macth", "field 'scorer': unknown scorer 'exact_macth'"),
    ("metrics", "[exact_match, bow_f11]", "field 'metrics[1]': unknown metric 'bow_f11'"),
    ("task_class", "nosuchpkg.mod:Cls", "field 'task_class': cannot import 'nosuchpkg.mod:Cls'"),
    ("task_class", "simpleqaa", "field 'task_class': unknown task class 'simpleqaa'"),
    ("scorer_options", "{profil: squad}", "field 'scorer_options': scorer 'extractive_qa' does not take these options"),
])
def test_misspelled_name_is_one_line_exit_2_and_no_request(stub_server, tmp_path, field, value, message):
    base = stub_server("--echo-gold")
    path = _qa_task(tmp_path / "user", **{field: value})
    done = _glotbench("run", "-m", "openai:stub", "--base-url", base, "-t", str(path), "-o", str(tmp_path / "run"),
                      "--no-progress")
    assert done.returncode == 2, done.stderr
    lines = [x for x in done.stderr.strip().splitlines() if x.strip()]
    assert len(lines) == 1, done.stderr
    assert str(path) in lines[0] and message in lines[0], lines[0]
    assert _n_requests(base) == 0
    assert not (tmp_path / "run" / "results.json").exists()


def test_metric_the_scorer_does_not_feed_fails_at_load(stub_server, tmp_path):
    """The issue's example: `metrics: [exact_match, bow_f1]` with `scorer: exact_match`."""
    base = stub_server("--echo-gold")
    path = _qa_task(tmp_path / "user", scorer="exact_match", scorer_options="{}", metrics="[exact_match, bow_f1]")
    done = _glotbench("run", "-m", "openai:stub", "--base-url", base, "-t", str(path), "-o", str(tmp_path / "run"))
    assert done.returncode == 2
    assert "field 'metrics[1]': metric 'bow_f1' averages per-item value 'bow_f1', which scorer 'exact_match' does not write" in done.stderr
    assert _n_requests(base) == 0


def test_extractive_qa_from_a_user_folder_without_python(stub_server, tmp_path):
    from glotbench.scoring.extractive_qa import item_values

    base = stub_server("--echo-gold")
    user = tmp_path / "user"
    path = _qa_task(user)
    assert sorted(p.suffix for p in user.iterdir()) == [".jsonl", ".yaml"]  # no Python file
    done = _glotbench("run", "-m", "openai:stub", "--base-url", base, "-t", str(path), "-o", str(tmp_path / "run"),
                      "--no-progress")
    assert done.returncode == 0, done.stderr
    assert _n_requests(base) == len(QA_ROWS)
    res = json.loads((tmp_path / "run" / "results.json").read_text())
    t = res["tasks"]["my.qa"]
    answers = ["Praze", "Brno.", "-", "Vltava"]
    per_item = [item_values(a, r["answers"], "cs") for a, r in zip(answers, QA_ROWS)]
    for key in ("exact_match", "bow_f1", "exact_match_raw", "bow_f1_raw", "exact_match_lemma", "bow_f1_lemma"):
        want = sum(v[key] for v in per_item) / len(per_item)
        assert t["metrics"][key]["value"] == pytest.approx(want, abs=1e-6), key
    # the three levels differ on this data: raw keeps "Brno.", normalised drops the dot, lemmas map Praze -> Praha
    assert t["metrics"]["exact_match_raw"]["value"] < t["metrics"]["exact_match"]["value"] < t["metrics"]["exact_match_lemma"]["value"]
    assert t["metrics"]["no_answer_accuracy"]["value"] == 1.0
    assert t["metric_definitions"]["bow_f1"] == {"name": "bow_f1", "kind": "mean", "params": {"key": "bow_f1"}, "direction": "higher",
                                                 "role": "headline", "format": ".3f"}


def test_user_scorer_by_module_attr(stub_server, tmp_path):
    pkg = tmp_path / "code" / "mypkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "scoring.py").write_text(textwrap.dedent("""\
        from glotbench.scoring.metrics import Metric
        from glotbench.scoring.scorers import scorer

        @scorer(metrics=["exact_match", "mypkg.scoring:starts_same"])
        def my_scorer(extracted, target, *, sample=None, pack=None):
            if extracted is None:
                return None, {"exact_match": 0.0, "starts_same": 0.0}
            golds = target or [""]
            return extracted, {"exact_match": float(extracted in golds),
                               "starts_same": float(any(extracted[:1] == g[:1] for g in golds))}

        starts_same = Metric("starts_same", key="starts_same")
        """))
    base = stub_server("--echo-gold")
    path = _qa_task(tmp_path / "user", scorer='"mypkg.scoring:my_scorer"', scorer_options="{}",
                    metrics='[exact_match, "mypkg.scoring:starts_same"]')
    done = _glotbench("run", "-m", "openai:stub", "--base-url", base, "-t", str(path), "-o", str(tmp_path / "run"),
                      "--no-progress", extra_path=tmp_path / "code")
    assert done.returncode == 0, done.stderr
    t = json.loads((tmp_path / "run" / "results.json").read_text())["tasks"]["my.qa"]
    assert t["metrics"]["exact_match"]["value"] == 0.0  # "Praze" is not "Praha" without lemmatising
    assert t["metrics"]["mypkg.scoring:starts_same"]["value"] == pytest.approx(2 / 4)  # Praze/Praha, Brno./Brno


def test_registries_resolve_in_a_fresh_process_without_benchmark_code():
    """Names resolve in a fresh process whatever was imported first, once the catalog is built (as
    the CLI and glotbench.evaluate build it); no task class module is imported for it."""
    code = textwrap.dedent(f"""\
        import sys
        from glotbench.scoring.metrics import get_metric
        from glotbench.scoring.scorers import get_scorer
        from glotbench.catalog import build
        build()
        from glotbench.extract import get_extractor
        m = get_metric("question_accuracy")
        assert m.key == "question_correct", m
        assert get_metric("factuality_in").direction == "lower"
        assert get_metric("bow_f1").key == "bow_f1"
        assert get_metric("answered").name == "answered"
        assert get_scorer("option_value").metrics
        assert get_scorer("extractive_qa").metrics
        get_extractor("choice")
        loaded = [n for n in sys.modules if n.startswith({BENCHMARK_PACKAGES!r})
                  and n.rsplit(".", 1)[-1] in ("task", "tasks", "bench", "klokanek")]
        assert not loaded, loaded
        print("ok")
        """)
    done = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_duplicate_registrations_are_refused_everywhere():
    from glotbench.extract import EXTRACTORS, register_extractor
    from glotbench.registry import RegistryError
    from glotbench.scoring.metrics import METRICS, Metric, get_metric, register_metric
    from glotbench.scoring.scorers import SCORERS, register_scorer
    from glotbench.tasks.classes import TASK_CLASSES, register_task_class
    from glotbench.tasks.task import Task

    with pytest.raises(RegistryError, match="metric 'accuracy' is already registered"):
        register_metric(Metric("accuracy", key="correct"))
    register_metric(get_metric("exact_match"))  # the same definition again is not a clash
    with pytest.raises(RegistryError, match="scorer 'label' is already registered"):
        register_scorer("label", lambda *a, **k: (None, {}))
    with pytest.raises(RegistryError, match="extractor 'choice' is already registered"):
        register_extractor("choice", lambda *a, **k: None)

    class Other(Task):
        pass

    with pytest.raises(RegistryError, match="task class 'simpleqa' is already registered"):
        register_task_class("simpleqa", Other)
    assert "simpleqa" in TASK_CLASSES and "label" in SCORERS and "choice" in EXTRACTORS and "accuracy" in METRICS


def test_metric_definition_round_trips_and_drives_direction():
    from glotbench.scoring.metrics import Metric, ScoredItem, get_metric

    items = [ScoredItem(gold="a", pred="a", values={"blank_correct": 1, "blank_total": 2}),
             ScoredItem(gold="b", pred="c", values={"blank_correct": 2, "blank_total": 2})]
    for name in ("accuracy", "macro_f1", "blank_accuracy", "abs_error", "factuality_f"):
        m = get_metric(name)
        again = Metric.from_dict(json.loads(json.dumps(m.to_dict())))
        assert again.to_dict() == m.to_dict()
        if name not in ("abs_error", "factuality_f"):  # (these items carry no errors or judge grades)
            assert again(items) == pytest.approx(m(items), nan_ok=True)
    assert get_metric("blank_accuracy")(items) == pytest.approx(3 / 4)
    assert not get_metric("abs_error").higher_is_better and get_metric("accuracy").higher_is_better
