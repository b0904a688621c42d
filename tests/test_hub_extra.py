"""datasets and pandas are the extra `hub` (pyproject.toml): without them a Hub-format task's data
is one line naming the extra, from each place that reads it, and the extras table knows it."""

from __future__ import annotations

import sys

import pytest

from glotbench.data.hub_folder import HUB_EXTRA, load_hub_folder
from glotbench.data.loaders import read_hf
from glotbench.errors import DataError
from glotbench.extras import EXTRAS


@pytest.fixture
def no_hub_packages(monkeypatch):
    for mod in ("datasets", "pandas"):
        monkeypatch.setitem(sys.modules, mod, None)  # `import datasets` raises ImportError


def _one_line(err: pytest.ExceptionInfo) -> str:
    text = str(err.value)
    assert "\n" not in text and HUB_EXTRA in text
    return text


def test_a_hub_folder_without_datasets_is_one_line_naming_the_extra(tmp_path, no_hub_packages):
    (tmp_path / "data.jsonl").write_text('{"a": 1}\n', encoding="utf-8")
    with pytest.raises(DataError) as err:
        load_hub_folder(tmp_path, None, "test", "task t.hub")
    assert _one_line(err).startswith("task t.hub: needs pip install 'glotbench[hub]' (no module 'datasets')")
    with pytest.raises(DataError) as err:
        read_hf("some/dataset", "main", None, "test")
    assert _one_line(err).startswith("dataset some/dataset: needs")


def test_czech_news_draw_without_pandas_names_the_extra(no_hub_packages):
    from glotbench.benchmarks.czech_bench.subsets import czech_news

    with pytest.raises(DataError) as err:
        czech_news([{"category": 1}], [1], 1, 0, {})
    assert "(no module 'pandas')" in _one_line(err)


def test_the_extras_table_names_hub():
    assert EXTRAS["hub"] == ("datasets", "pandas")
