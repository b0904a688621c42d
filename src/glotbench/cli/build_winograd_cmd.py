"""`glotbench build winograd`: Winograd schemas to NLI pairs, GLUE's WNLI construction (HuLU §3.1's
HuWNLI; :mod:`glotbench.build.winograd`). No model: the pronoun (or the question's wh-word) is replaced
by each candidate referent."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from glotbench.cli.build_app import build_app
from glotbench.cli.build_qa_cmd import hidden_input, items_argument, one_input
from glotbench.cli.option_groups import options, setting_option
from glotbench.settings import RunSettings


def read_schemas(path: Path) -> list[tuple[str, dict]]:
    """``[(where, record)]`` of a JSON array (``record N``) or a JSONL file (``line N``)."""
    import json

    from glotbench.errors import DataError

    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: no such file")
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(path.read_text(encoding="utf-8-sig"))
        except (ValueError, UnicodeDecodeError) as err:
            raise DataError(f"{path}: not readable JSON ({str(err).splitlines()[0]})") from None
        if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
            raise DataError(f"{path}: a JSON file of schemas must be an array of objects")
        return [(f"record {n}", r) for n, r in enumerate(data, 1)]
    from glotbench.data.loaders import iter_jsonl

    return [(f"line {n}", r) for n, r in iter_jsonl(path)]


@build_app.command("winograd")
@options((RunSettings, "output!"),
         about={"output": "NLI pairs JSONL (id, orig_id, sentence1, sentence2, label, candidate, replaced)."})
def winograd_cmd(
    source: Optional[Path] = items_argument("Winograd schemas: a JSON array or JSONL."),
    input: Optional[Path] = hidden_input(),
    sentence_field: str = setting_option("sentence", "--sentence-field", help="The schema's sentence (the premise)."),
    candidates: str = setting_option("candidate1,candidate2", "--candidates", help="Comma-separated fields of the candidate referents."),
    correct_field: str = setting_option("correct", "--correct-field", help="The field holding the correct referent (one of the candidates)."),
    question_field: Optional[str] = setting_option(None, "--question-field", help="A wh-question whose first word stands for the "
                                                   "referent: that word is replaced (pro-drop languages). Give it or pronoun_field."),
    pronoun_field: Optional[str] = setting_option(None, "--pronoun-field", help="The field naming the ambiguous pronoun: its "
                                                  "occurrence in the sentence is replaced. Give it or question_field."),
    occurrence_field: Optional[str] = setting_option(None, "--occurrence-field", help="pronoun_field: the field saying which "
                                                     "occurrence (0-based; default the first)."),
    id_field: str = setting_option("id", "--id-field", help="Field holding the item id."),
    *, output: Path,
) -> None:
    """HuWNLI's construction (HuLU §3.1, GLUE's WNLI): each candidate referent in the pronoun's place; 1 for the correct one, 0 otherwise."""
    from collections import Counter

    from glotbench.build.provenance import add_step, write_items
    from glotbench.build.winograd import pairs

    input = one_input("winograd", source, input, "schemas")
    schemas = read_schemas(input)
    out = pairs(schemas, id_field=id_field, sentence_field=sentence_field,
                candidate_fields=[c.strip() for c in candidates.split(",") if c.strip()], correct_field=correct_field,
                question_field=question_field, pronoun_field=pronoun_field, occurrence_field=occurrence_field, source=str(input))
    method = f"question:{question_field}" if question_field else f"pronoun:{pronoun_field}"
    for p in out:
        add_step(p, "winograd", source=p["orig_id"], method=method)
    write_items(output, out)
    labels = Counter(p["label"] for p in out)
    replaced = Counter(p["replaced"] for p in out)
    typer.echo(f"winograd: schemas {len(schemas)} · pairs {len(out)} (label 1: {labels['1']}, 0: {labels['0']}) · "
               f"replaced words: " + ", ".join(f"{w} {c}" for w, c in replaced.most_common(8)))
    typer.echo(f"winograd: wrote {output}")
