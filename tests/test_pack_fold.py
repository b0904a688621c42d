"""A pack's ``normalization.fold`` (ru: ё read as е): texts are compared with the folded letters, upper
case too; a pack without a fold keeps its fingerprint (the hash of its content without the empty field,
as before the field existed); a malformed fold is one line naming the key."""

from __future__ import annotations

import pytest

from glotbench.engine.fingerprint import pack_fingerprint
from glotbench.extract import extract_choice
from glotbench.extract.text import normalize
from glotbench.languages import get_pack
from glotbench.languages.pack import Normalization
from glotbench.models.base import canonical_json, sha256_hex


def test_russian_compares_yo_as_ye():
    ru = get_pack("ru")
    assert ru.normalization.fold == {"ё": "е"}
    assert normalize("Ещё ЁЛКА, всё!", ru) == normalize("еще елка все", ru) == "еще елка все"
    assert normalize("Ёж", get_pack("mn")) == "ёж"  # no fold elsewhere
    # an answer typed with е picks the option written with ё (and the other way round)
    assert extract_choice("Ответ: елка", ["A", "B"], ["ёлка", "сосна"], "ru") == "A"
    assert extract_choice("Ответ: Сёмга", ["A", "B"], ["сельдь", "семга"], "ru") == "B"


@pytest.mark.parametrize("code", ["cs", "hu", "en", "mn", "zh"])
def test_a_pack_without_a_fold_keeps_its_fingerprint(code):
    pack = get_pack(code)
    assert pack.normalization.fold == {}
    content = pack.model_dump(mode="json", exclude={"perturbations"})
    del content["normalization"]["fold"]  # the pack's content as it was before the field existed
    assert pack_fingerprint(pack, code) == sha256_hex(canonical_json(content))[:8]
    ru = get_pack("ru")  # a fold is part of the hash
    assert pack_fingerprint(ru, "ru") == sha256_hex(canonical_json(ru.model_dump(mode="json", exclude={"perturbations"})))[:8]


def test_a_fold_key_must_be_one_character():
    with pytest.raises(ValueError, match="fold: each key must be one character"):
        Normalization(fold={"ёё": "е"})
