"""Two pulls of one Hub commit with different ``include`` patterns (czech_bench.wiki_lingua_en takes
czech/* and english/*, wiki_lingua_cs only czech/*) share huggingface_hub's snapshot folder: each
target gets exactly the files its own patterns match, in either order."""
from __future__ import annotations

import pytest

C = "0b65f1ed2d747a576240cb4092c626161c86ea63"


@pytest.mark.parametrize("order", [("both", "cs"), ("cs", "both")])
def test_each_pull_takes_only_its_own_patterns(tmp_path, monkeypatch, order):
    from glotbench.sources import hub
    from glotbench.testing.hub_mirror import start_mirror

    for v in ("GLOTBENCH_OFFLINE", "HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
        monkeypatch.delenv(v, raising=False)
    m = start_mirror(tmp_path / "mirror")
    try:
        for k, v in m.env().items():
            monkeypatch.setenv(k, v)
        m.add_hf("esdurmus/wiki_lingua", C, {"czech/train.parquet": b"cs", "english/train.parquet": b"en",
                                             "README.md": b"card"})
        patterns = {"both": ["czech/*", "english/*"], "cs": ["czech/*"]}
        commit, expected = hub.resolve("esdurmus/wiki_lingua", C)
        root = tmp_path / "data"
        got = {}
        for name in order:
            got[name] = hub.pull("esdurmus/wiki_lingua", commit, patterns[name], root / name, expected,
                                 tmp_path / "hf", root=root)
        assert sorted(got["cs"]) == ["czech/train.parquet"]
        assert sorted(got["both"]) == ["czech/train.parquet", "english/train.parquet"]
        on_disk = sorted(p.relative_to(root / "cs").as_posix() for p in (root / "cs").rglob("*") if p.is_file())
        assert on_disk == ["czech/train.parquet"]
    finally:
        m.stop()
