"""The catalog's open worlds, tested the way a user meets them: two packages outside glotbench
(tests/fixtures/plugins: a Slovak benchmark that ships its own language pack, and a model backend),
each installed with pip from its own pyproject.toml, then used by name in a fresh process.
Also: a lookup before the catalog is built is an error, and a broken entry point in one group is
set aside with one line while the rest works."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SRC = str(REPO / "src")
FIXTURES = REPO / "tests" / "fixtures" / "plugins"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """Both fixture packages installed with pip (each from its own pyproject.toml) into a folder of their own."""
    tmp = tmp_path_factory.mktemp("plugins")
    shutil.copytree(FIXTURES, tmp / "src")  # pip builds in the source folder: keep the repo's clean
    target = tmp / "site"
    args = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target),
            str(tmp / "src" / "slovak_bench"), str(tmp / "src" / "echo_backend")]
    if importlib.util.find_spec("setuptools") is not None:  # as tests/test_layering.py installs bench_pkg
        args.insert(5, "--no-build-isolation")
    done = subprocess.run(args, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (target / "slovak_bench" / "sk.yaml").is_file() and (target / "slovak_bench" / "tasks" / "capitals.jsonl").is_file()
    return target


def _run(args: list[str], cwd: Path, *path: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*map(str, path), SRC]), "GLOTBENCH_OFFLINE": "1",
           "NO_COLOR": "1"}
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def _scored(run_dir: Path) -> dict:
    task = json.loads((run_dir / "results.json").read_text(encoding="utf-8"))["tasks"]["slovak_bench.capitals"]
    assert task["language"] == "sk" and task["n_scored"] == 4 and task["n_errors"] == 0, task
    return task


def test_a_benchmark_package_with_its_language_runs_on_a_backend_package_by_name(site, tmp_path):
    """`glotbench run --model fixture-echo:A --tasks slovak_bench.capitals`: the task, its data and
    its Slovak pack come from one package, the model from the other; echo answers A to all four
    items, two of which are A."""
    code = ("import sys, runpy\nsys.argv = ['glotbench', 'tasks', 'slovak_bench.*', '--plain']\ntry:\n"
            "    runpy.run_module('glotbench', run_name='__main__')\nexcept SystemExit as e:\n    assert not e.code\n"
            "print('imported:', sorted(m for m in sys.modules if m.startswith(('echo_backend', 'slovak_bench'))))")
    listed = _run(["-c", code], tmp_path, site)
    assert listed.returncode == 0, listed.stderr[-3000:]
    assert "slovak_bench.capitals\tsk\t4\taccuracy" in listed.stdout
    # listing imports each package's register module only: no model code, no task code
    assert listed.stdout.splitlines()[-1] == "imported: ['echo_backend', 'slovak_bench']", listed.stdout
    done = _run(["-m", "glotbench", "run", "--model", "fixture-echo:A", "--tasks", "slovak_bench.capitals",
                 "-o", str(tmp_path / "out"), "--no-progress"], tmp_path, site)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert "set aside" not in done.stderr
    task = _scored(tmp_path / "out")
    assert task["metrics"]["accuracy"]["value"] == 0.5
    model = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))["model"]
    assert "fixture-echo:A" in json.dumps(model)


def test_a_model_object_is_refused_for_sharded_runs_before_anything_runs(site, tmp_path):
    code = ("import glotbench\nfrom echo_backend.model import EchoModel\nm = EchoModel('C')\n"
            "try:\n    glotbench.evaluate(model=m, tasks='slovak_bench.capitals', shards=2)\n"
            "except glotbench.errors.GlotbenchError as err:\n    print(m.calls, err)\n")
    done = _run(["-c", code], tmp_path, site)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith("0 evaluate(model=<Model object>): shards run in processes"), done.stdout
    assert not (tmp_path / "runs").exists()


def test_evaluate_takes_a_model_object(site, tmp_path):
    """`glotbench.evaluate(model=EchoModel("C"))` in a fresh process: the object itself answers
    (four calls), and the result is scored as by name (C is right once)."""
    code = ("import glotbench\nfrom echo_backend.model import EchoModel\nm = EchoModel('C')\n"
            f"r = glotbench.evaluate(model=m, tasks='slovak_bench.capitals', output={str(tmp_path / 'out')!r})\n"
            "print(m.calls, r.tasks['slovak_bench.capitals'].metrics['accuracy'].value)")
    done = _run(["-c", code], tmp_path, site)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split()[-2:] == ["4", "0.25"], done.stdout
    _scored(tmp_path / "out")


def test_a_lookup_before_the_catalog_is_built_is_an_error(tmp_path):
    code = ("from glotbench.registry import CatalogNotBuilt\nfrom glotbench.scoring.metrics import METRICS\n"
            "from glotbench.languages import get_pack\nfrom glotbench.tasks.registry import resolve\n"
            "assert get_pack('cs').code == 'cs'  # a built-in pack is a file of glotbench itself\n"
            "for look in (METRICS.names, lambda: 'accuracy' in METRICS, lambda: get_pack('sk'),\n"
            "             lambda: resolve(['mm_eval.syntax'])):\n"
            "    try:\n        look()\n    except CatalogNotBuilt as err:\n        print(err)\n"
            "    else:\n        raise SystemExit('no error')\n"
            "from glotbench.catalog import build\nbuild()\nassert 'accuracy' in METRICS and resolve(['mm_eval.syntax'])\n")
    done = _run(["-c", code], tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert len(lines) == 4 and all("catalog is not built" in ln and "catalog.build()" in ln for ln in lines), lines


def _dist(folder: Path, entry_points: str, **modules: str) -> Path:
    """A fake installed distribution: a dist-info with ``entry_points`` and the given modules."""
    info = folder / "broken_plugins-0.0.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-plugins\nVersion: 0.0.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(entry_points, encoding="utf-8")
    for name, text in modules.items():
        (folder / f"{name}.py").write_text(text, encoding="utf-8")
    return folder


def test_a_broken_entry_point_in_one_group_is_set_aside_and_the_rest_works(site, tmp_path):
    """One package per group beside the two fixtures: a backend whose register raises, a standalone
    language pack (works), a second Slovak pack (a clash with slovak_bench's), and a benchmark whose
    tasks come with a metric name glotbench has (a clash). The bad ones are one line each and the
    clashing benchmark adds no task; the standalone pack resolves, and the Slovak task still runs."""
    pack = (site / "slovak_bench" / "sk.yaml").read_text(encoding="utf-8").replace("code: sk", "code: xx")
    (tmp_path / "xx.yaml").write_text(pack, encoding="utf-8")
    (tmp_path / "sk.yaml").write_text(pack.replace("code: xx", "code: sk"), encoding="utf-8")
    clash_tasks = tmp_path / "clash_tasks"
    shutil.copytree(site / "slovak_bench" / "tasks", clash_tasks)
    spec = clash_tasks / "sk_capitals.yaml"
    spec.write_text(spec.read_text(encoding="utf-8").replace("slovak_bench.capitals", "clash.capitals"), encoding="utf-8")
    extra = _dist(tmp_path / "extra", "[glotbench.benchmarks]\nclash_bench = clash_bench:register\n\n"
                                      "[glotbench.backends]\nbroken_backend = broken_backend:register\n\n"
                                      "[glotbench.languages]\nxx_pack = xx_pack:register\nsk_again = sk_again:register\n",
                  broken_backend="def register(bench):\n    raise RuntimeError('backend register exploded')\n",
                  xx_pack=f"def register(bench):\n    bench.language_pack({str(tmp_path / 'xx.yaml')!r})\n",
                  sk_again=f"def register(bench):\n    bench.language_pack({str(tmp_path / 'sk.yaml')!r})\n",
                  clash_bench=f"def register(bench):\n    bench.tasks({str(clash_tasks)!r})\n"
                              "    bench.metric('accuracy', 'clash_bench:nothing')\n")
    code = ("from glotbench.catalog import build\nfrom glotbench.languages import get_pack\n"
            "c = build()\nprint(get_pack('xx').name, get_pack('sk').code, sorted(c.loaded['glotbench.languages']))")
    done = _run(["-c", code], tmp_path, extra, site)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "Slovak sk ['xx_pack']", done.stdout
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert len(lines) == 3 and all(ln.startswith("warning: set aside:") for ln in lines), lines
    assert lines[0].startswith("warning: set aside: benchmark package 'clash_bench'") and "'accuracy'" in lines[0]
    assert "'broken_backend'" in lines[1] and "glotbench.backends" in lines[1] and "backend register exploded" in lines[1]
    assert "'sk_again'" in lines[2] and "already has a pack" in lines[2]
    listed = _run(["-m", "glotbench", "tasks", "--plain"], tmp_path, extra, site)
    assert "slovak_bench.capitals" in listed.stdout and "clash.capitals" not in listed.stdout
    run = _run(["-m", "glotbench", "run", "--model", "fixture-echo:B", "--tasks", "slovak_bench.capitals",
                "-o", str(tmp_path / "out"), "--no-progress"], tmp_path, extra, site)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stderr.count("set aside") == 3
    assert _scored(tmp_path / "out")["metrics"]["accuracy"]["value"] == 0.25
