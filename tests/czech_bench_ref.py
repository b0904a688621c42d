"""Test helpers: a plain re-statement of Czech-Bench's prompts and answer rules, read from the
reference's own ``prompts.py`` (as data, with ``ast``) and written out here by hand, so the tests
compare glotbench's tasks against the reference, not against themselves."""

from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "czech_bench_hub"


def reference_dir() -> Path:
    from glotbench.paths import resolve_data_file

    ref = resolve_data_file("czech_bench/reference/benchmarks")
    if not ref.is_dir():
        pytest.skip("Czech-Bench reference not found (czech_bench/reference under the shared data)")
    return ref


def reference_parts(key: str) -> dict:
    tree = ast.parse((reference_dir() / key / "prompts.py").read_text(encoding="utf-8"))
    out = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) and node.targets[0].id in ("task", "few_shot", "request"):
            out[node.targets[0].id] = ast.literal_eval(node.value)
    return out


def reference_prompt(key: str, **variables) -> tuple[str, str, str]:
    """(plain prompt, chat system, chat user) as LangChain's f-string templates render them."""
    p = reference_parts(key)
    system = (p["task"] + p["few_shot"]).format(**variables)
    user = p["request"].format(**variables)
    return system + user, system, user


def jsonl(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def make_czech_news(folder: Path) -> None:
    """A CZE-NEC-shaped test split big enough for the 200-per-category draw (written at test time)."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for cat in (1, 2, 3, 4, 6, 7):
        for i in range(205):
            rows.append({"brief": f"Zpráva {i} z kategorie {cat}.", "content": "...", "category": cat, "url": f"https://example.cz/{cat}/{i}"})
    (folder / "test.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def hub_root(tmp_path: Path) -> Path:
    """The hand-made Hub-format fixtures plus a generated CZE-NEC split, as one data root."""
    root = tmp_path / "data"
    shutil.copytree(FIXTURES, root)
    make_czech_news(root / "czech_bench" / "hf" / "czech_news")
    return root


# ---------------------------------------------------------------- the thesis' test splits (Czech-Bench's own files)
THESIS_SPLITS = {  # task key -> (items, label field, labels) of the split the thesis scored
    "ctkfacts": (558, "label", (0, 1, 2)),
    "facebook_comments": (1000, "sentiment_int", (-1, 0, 1)),
    "mall_reviews": (3000, "rating_int", (-1, 0, 1)),
}


def thesis_split_rows(key: str, n: int | None = None) -> list[dict]:
    """Made-up rows in the record format of the Hub split Czech-Bench saved (``load_dataset(...,
    split="test").save_to_disk``), ``n`` of them (default: the thesis' count), labels in turn (so
    label-balanced, as the cards of the two sentiment sets say; CTKFacts' real balance is not known)."""
    total, field, labels = THESIS_SPLITS[key]
    n = total if n is None else n
    rows = []
    for i in range(n):
        lab = labels[i % len(labels)]
        if key == "ctkfacts":
            rows.append({"id": 1000 + i, "label": lab, "evidence": f"Praha {i}. června (ČTK) - Zpráva číslo {i}.",
                         "claim": f"Tvrzení číslo {i}."})
        elif key == "facebook_comments":
            rows.append({"comment_id": f"fb-{i}", "sentiment_str": {-1: "negativní", 0: "neutrální", 1: "pozitivní"}[lab],
                         "sentiment_int": lab, "comment": f"Komentář {i}"})
        else:
            rows.append({"rating_str": {-1: "negativní", 0: "neutrální", 1: "pozitivní"}[lab], "rating_int": lab,
                         "comment": f"Recenze {i}"})
    return rows


def arrow_bytes(rows: list[dict], tmp: Path) -> bytes:
    """``rows`` as the one data file ``datasets`` ``save_to_disk`` writes (an Arrow IPC stream)."""
    from datasets import Dataset

    Dataset.from_list(rows).save_to_disk(str(tmp))
    return (tmp / "data-00000-of-00001.arrow").read_bytes()


def write_thesis_splits(root: Path, n: int | None = None) -> dict[str, Path]:
    """The three splits at the paths the default tasks read (``czech_bench/<key>_test/...``)."""
    out = {}
    for key in THESIS_SPLITS:
        dest = root / "czech_bench" / f"{key}_test" / "data-00000-of-00001.arrow"
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(arrow_bytes(thesis_split_rows(key, n), root / ".arrow-build" / key))
        out[key] = dest
    shutil.rmtree(root / ".arrow-build", ignore_errors=True)
    return out


MIRROR = Path(__file__).resolve().parent / "fixtures" / "hub_mirror" / "datasets"
HUB_REDIRECTS = {"truthful_qa": "truthfulqa/truthful_qa"}  # legacy Hub ids the Hub redirects


def mirror_root(tmp_path: Path) -> Path:
    """A data root whose Hub folders (``czech_bench/hf/<task>``) are the hub_mirror repositories,
    linked by each task's ``dataset.hf.id``; AGREE and SQuAD-cs (not Hub datasets) from the
    hand-made fixtures; the three thesis splits Czech-Bench keeps as Arrow files, 12 made-up rows each."""
    from glotbench.tasks.registry import resolve

    root = tmp_path / "data"
    for name in ("agree", "squad_cs"):
        shutil.copytree(FIXTURES / "czech_bench" / name, root / "czech_bench" / name)
    write_thesis_splits(root, n=12)  # CTKFacts, Facebook comments, Mall.cz: the thesis' splits (small stand-ins)
    for task in resolve(["czech_bench"]):
        ds = task.spec.dataset
        if ds.format != "hf" or ds.hf is None:
            continue
        repo = MIRROR / HUB_REDIRECTS.get(ds.hf.id, ds.hf.id)
        assert repo.is_dir(), f"no mirror folder for {ds.hf.id}"
        for rel in set(ds.splits.values()):
            link = root / rel
            if not link.exists():
                link.parent.mkdir(parents=True, exist_ok=True)
                link.symlink_to(repo, target_is_directory=True)
    return root
