"""CTKFacts, Facebook comments and Mall.cz: the default tasks score the test splits the thesis scored
(558 / 1,000 / 3,000 items), which Czech-Bench keeps as ``datasets`` Arrow files in its repository
(``benchmarks/<task>/data/test``, Git LFS; its evaluators run with ``local: true`` and read them
with ``load_from_disk``). The whole GitHub exports stay as the named variants ``*_full`` (3,026 /
9,752 / 21,806 items, checked on the shared data when it is there)."""

from __future__ import annotations

from collections import Counter

import pytest

from czech_bench_ref import THESIS_SPLITS, arrow_bytes, thesis_split_rows, write_thesis_splits

pytest.importorskip("datasets")
CZECH_BENCH = "715d3c14e29f7be703d8c86fe11de0720361862b"
# the Git LFS pointers at that commit (`git show 715d3c14:benchmarks/<task>/data/test/data-00000-of-00001.arrow`)
POINTERS = {"ctkfacts": (285968, "917d35de187e71ab8c4834a6657be77392166c2834e208b14380990e3f945ee5"),
            "facebook_comments": (106496, "5ee8b4853bf222c1860bb1af4e9ae896d4c2336330432e9e2b24fb251398479c"),
            "mall_reviews": (648208, "39dec4dba27319640a24c6d65819d253e847a940c5f1fc60f18ef0163c9c235d")}


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return tmp_path_factory.mktemp("thesis")


@pytest.fixture()
def task_of(root, monkeypatch):
    monkeypatch.setenv("GLOTBENCH_DATA", str(root))
    from glotbench.tasks.registry import resolve

    return lambda name: resolve([name])[0]


def test_defaults_declare_czech_bench_files():
    from glotbench.tasks.registry import all_specs

    specs = all_specs()
    for key, (size, sha) in POINTERS.items():
        spec = specs[f"czech_bench.{key}"][0]
        [origin] = spec.source.fetch
        assert (origin.kind, origin.repo, origin.revision) == ("github", "poludmik/czech-bench", CZECH_BENCH)
        [f] = origin.files
        assert (f.path, f.size, f.sha256, f.lfs) == (f"benchmarks/{key}/data/test/data-00000-of-00001.arrow", size, sha, True)
        assert spec.dataset.splits["test"] == f.dest and "czech_bench" in spec.suites
        full = specs[f"czech_bench.{key}_full"][0]
        assert full.suites == [] and full.source.fetch[0].repo != "poludmik/czech-bench"
        assert full.prompt == spec.prompt and full.options.get("reader") != "hf_arrow"


def test_default_tasks_have_the_thesis_counts_and_balance(root, task_of):
    write_thesis_splits(root)
    for key, (n, field, labels) in THESIS_SPLITS.items():
        samples = task_of(f"czech_bench.{key}").samples()
        assert len(samples) == n, key
        got = Counter(s.target for s in samples)
        assert got == Counter(str(r[field]) for r in thesis_split_rows(key)), key  # every row, as stored
        assert set(got) == {str(x) for x in labels}, key
        if key != "ctkfacts":  # the two sentiment splits are label-balanced (their cards; 1,000 = 333 + 334 + 333)
            assert max(got.values()) - min(got.values()) <= 1, (key, got)
    fb = task_of("czech_bench.facebook_comments").samples()
    assert fb[0].id == "fb-0" and fb[0].vars["text"] == "Komentář 0"  # comment_id is the item id


def test_not_an_arrow_file_is_one_line(tmp_path, monkeypatch):
    from glotbench.errors import DataError
    from glotbench.tasks.registry import resolve

    dest = tmp_path / "czech_bench" / "mall_reviews_test" / "data-00000-of-00001.arrow"
    dest.parent.mkdir(parents=True)
    dest.write_bytes(b"version https://git-lfs.github.com/spec/v1\noid sha256:39de\nsize 648208\n")  # a pointer
    monkeypatch.setenv("GLOTBENCH_DATA", str(tmp_path))
    with pytest.raises(DataError) as e:
        resolve(["czech_bench.mall_reviews"])[0].samples()
    assert "\n" not in str(e.value) and str(dest) in str(e.value) and "Arrow" in str(e.value)


def test_arrow_reader_matches_datasets_load_from_disk(tmp_path):
    """The reader's rows are what Czech-Bench's own ``load_from_disk`` returns for the same folder."""
    from datasets import load_from_disk

    from glotbench.benchmarks.czech_bench.records import read_hf_arrow

    rows = thesis_split_rows("ctkfacts", 7)
    arrow_bytes(rows, tmp_path / "saved")
    assert read_hf_arrow(tmp_path / "saved" / "data-00000-of-00001.arrow") == [dict(r) for r in load_from_disk(str(tmp_path / "saved"))] == rows


def test_full_variants_on_the_shared_exports():
    from glotbench.paths import resolve_data_file
    from glotbench.tasks.registry import resolve

    need = {"ctkfacts": "czech_bench/ctkfacts/export_08-30-2021_0200am_173.jsonl",
            "facebook_comments": "czech_bench/facebook_comments/gold-labels.txt",
            "mall_reviews": "czech_bench/mall_reviews/data_test.csv"}
    if not all(resolve_data_file(rel).exists() for rel in need.values()):
        pytest.skip("the shared Czech-Bench exports are not here (../shared/data or GLOTBENCH_DATA)")
    counts = {key: Counter(s.target for s in resolve([f"czech_bench.{key}_full"])[0].samples()) for key in need}
    assert sum(counts["ctkfacts"].values()) == 3026
    assert counts["facebook_comments"] == {"0": 5174, "1": 2587, "-1": 1991}  # 10,000 minus 248 bipolar: 9,752
    assert counts["mall_reviews"] == {"-1": 1529, "0": 4890, "1": 15387}  # 21,806, unbalanced
