"""Issue 37 finding 3: a Hub-format data folder read through ``datasets`` gives the rows in *that*
folder. ``datasets.load_dataset(folder)`` finds its prepared copy by the folder's basename, so a
second data root with a folder of the same name, or a snapshot replaced in place, used to be
scored with the first folder's rows while the data fingerprint named the new files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

datasets = pytest.importorskip("datasets")

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "czech_bench_hub"
REL = Path("czech_bench") / "hf" / "snli_en"
ROW = {"premise": "A man plays a guitar on the street.", "hypothesis": "A man plays an instrument.", "label": 0}


def _root(where: Path, premise: str) -> Path:
    """A data root holding the snli_en fixture folder, its one row's premise set to ``premise``."""
    folder = where / REL
    shutil.copytree(FIXTURES / REL, folder)
    _write(folder, premise)
    return where


def _write(folder: Path, premise: str) -> None:
    (folder / "plain_text" / "test-00000-of-00001.jsonl").write_text(
        json.dumps({**ROW, "premise": premise}) + "\n", encoding="utf-8")


@pytest.fixture()
def load(tmp_path, monkeypatch):
    """(premises of the task's rows, data fingerprint) with ``root`` as the data root; one shared
    ``datasets`` cache, as on a user's machine."""
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path / "hf_cache"))
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")

    def run(root: Path) -> tuple[list[str], str]:
        monkeypatch.setenv("GLOTBENCH_DATA", str(root))
        from glotbench.tasks.registry import resolve

        task = resolve(["czech_bench.snli_en"])[0]
        return [s.vars["context"] for s in task.samples()], task.data_fingerprint()

    return run


def test_two_data_roots_with_the_same_folder_name_score_their_own_rows(tmp_path, load):
    a = _root(tmp_path / "a", "A man plays a guitar on the street.")
    b = _root(tmp_path / "b", "A woman reads a book in the park.")
    rows_a, fp_a = load(a)
    rows_b, fp_b = load(b)
    assert rows_a == ["A man plays a guitar on the street."]
    assert rows_b == ["A woman reads a book in the park."]
    assert fp_a != fp_b
    assert load(a) == (rows_a, fp_a)  # and back again


def test_a_folder_changed_in_place_scores_the_new_rows(tmp_path, load):
    a = _root(tmp_path / "a", "A man plays a guitar on the street.")
    rows, fp = load(a)
    _write(a / REL, "Two dogs run across a snowy field today.")  # a newer snapshot in the same folder
    rows2, fp2 = load(a)
    assert rows == ["A man plays a guitar on the street."]
    assert rows2 == ["Two dogs run across a snowy field today."]
    assert fp2 != fp


def test_the_fingerprint_is_the_content_of_the_files_datasets_reads(tmp_path):
    from glotbench.data.hub_folder import folder_files, folder_sha256

    a = _root(tmp_path / "a", "same")
    b = _root(tmp_path / "b", "same")
    assert folder_sha256(a / REL) == folder_sha256(b / REL)  # the same content in another place: the same hash
    meta = a / REL / ".cache" / "huggingface" / "download"  # what huggingface_hub's local_dir download leaves
    meta.mkdir(parents=True)
    (meta / "x.metadata").write_text("etag 123\n1700000000.0\n", encoding="utf-8")
    assert folder_sha256(a / REL) == folder_sha256(b / REL)
    assert [p.relative_to(a / REL).as_posix() for p in folder_files(a / REL)] == [
        "README.md", "plain_text/test-00000-of-00001.jsonl"]
