"""What a run will cost, before it is run: the requests a run would send, their tokens and price.

The prompts are built exactly as ``glotbench run`` builds them (``Task.requests`` with the same run
settings); no model is called. Counting and pricing are :mod:`glotbench.estimate`'s. How tokens are
counted and the expected output tokens (``max``, ``answer``, an integer; loglikelihood requests 0):
docs/reports.md "glotbench estimate".
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from glotbench.errors import GlotbenchError
from glotbench.estimate import (
    CostEstimate,
    TokenCounter,
    estimate_cost,
    load_prices,
    tokens_per_word,
)
from glotbench.estimate.tokens import get_token_counter
from glotbench.models.base import GenRequest, LoglikelihoodRequest
from glotbench.settings import RunSettings
from glotbench.tasks.task import Sample, Task

LOCAL_PREFIXES = ("embedded", "default", "llamacpp:", "gguf:")


@dataclass
class TaskEstimate:
    task: str
    language: str
    n_items: int
    mode: str
    estimate: CostEstimate
    output_basis: str


@dataclass
class RunEstimate:
    model: str
    price_name: str
    tasks: list[TaskEstimate]
    token_method: str
    approximate: bool
    output_basis: str
    per_language: dict[str, dict]  # lang -> {"prompt": tokens_per_word dict, "items": ...}
    currency: str | None
    price_taken: str | None
    price_source: str | None
    notes: list[str] = field(default_factory=list)

    @property
    def n_requests(self) -> int:
        return sum(t.estimate.n_requests for t in self.tasks)

    @property
    def input_tokens(self) -> int:
        return sum(t.estimate.input_tokens for t in self.tasks)

    @property
    def output_tokens(self) -> int:
        return sum(t.estimate.output_tokens for t in self.tasks)

    @property
    def total_cost(self) -> float | None:
        costs = [t.estimate.total_cost for t in self.tasks]
        return None if any(c is None for c in costs) else sum(costs)

    def to_dict(self) -> dict:
        d = asdict(self)
        d.update(n_requests=self.n_requests, input_tokens=self.input_tokens, output_tokens=self.output_tokens,
                 total_cost=self.total_cost)
        return d


def request_text(req: Any) -> str:
    """The text a request sends: chat message contents joined by newlines, or the plain prompt."""
    if isinstance(req, LoglikelihoodRequest):
        return req.context + req.continuation
    if isinstance(req, GenRequest):
        if req.messages is not None:
            return "\n".join(str(m.get("content", "")) for m in req.messages)
        return req.prompt or ""
    raise GlotbenchError(f"estimate: unknown request type {type(req).__name__}")


def item_text(task: Task, sample: Sample) -> str:
    """The item's own words (its mapped fields and options), without literal instructions. A value a
    task keeps for its own scoring is not the item's text: a name starting with ``_`` (a converted
    lm-eval task that delegates ``process_results`` or a filter keeps its whole record as
    ``_lm_eval_doc``), a mapping or a flag."""
    literal = {k for k, v in task.spec.fields.items() if isinstance(v, str) and v.startswith("=")}
    skip = literal | {"labels", "labels_text", "choices_block", "target", "id"}
    parts = []
    for k, v in sample.vars.items():
        if k in skip or v is None or k.startswith("_") or isinstance(v, (dict, bool)):
            continue
        if isinstance(v, list):
            parts.extend(str(x) for x in v)
        else:
            parts.append(str(v))
    return "\n".join(parts)


def local_counter(model_spec: str) -> tuple[TokenCounter | None, bool | None, str]:
    """The model's own tokenizer for embedded / llamacpp specs: (counter, is_chat, note)."""
    spec = model_spec.strip()
    if not (spec.lower() in ("embedded", "default") or spec.lower().startswith(LOCAL_PREFIXES[2:])):
        return None, None, ""
    from glotbench.models.registry import load_model

    model = load_model(spec)
    name = getattr(model, "path", None)
    method = f"llama.cpp:{name.name}" if name is not None else "model tokenizer"
    return TokenCounter(model.count_tokens, method, False), model.is_chat, ""


def _price_name(model_spec: str) -> str:
    spec = model_spec.strip()
    if spec.lower() in ("embedded", "default"):
        return "embedded"
    return spec


def estimate_run(model: str, tasks: list[Task], settings: RunSettings, prices_path: str | None = None,
                 output_tokens: str | int = "max", chat: bool | None = None) -> RunEstimate:
    from glotbench.tasks.modes import task_mode
    from glotbench.tasks.request_settings import RequestSettings

    prices = load_prices(prices_path)
    counter, model_chat, _ = local_counter(model)
    price_name = _price_name(model)
    price = prices.get(price_name)
    if price is not None:
        price_name = price.model
    if counter is None:
        counter = get_token_counter(price.tokenizer if price else None)
    is_chat = chat if chat is not None else (model_chat if model_chat is not None else True)
    if isinstance(output_tokens, str) and output_tokens.isdigit():
        output_tokens = int(output_tokens)
    if not (isinstance(output_tokens, int) or output_tokens in ("max", "answer")):
        raise GlotbenchError(f"--output-tokens must be max, answer or a number, got {output_tokens!r}")
    if isinstance(output_tokens, int) and output_tokens < 0:
        raise GlotbenchError(f"--output-tokens must be >= 0, got {output_tokens}")

    results: list[TaskEstimate] = []
    prompt_texts: dict[str, list[str]] = {}
    item_texts: dict[str, list[str]] = {}
    notes: list[str] = []
    req = RequestSettings.from_values(settings.model_dump())
    for task in tasks:
        samples = task.run_samples(req)
        mode = task_mode(task, req)
        prompts, outs = [], []
        for s in samples:
            reqs = task.requests(s, mode=mode, chat=is_chat, settings=req)
            if mode == "generate" and task.n_turns > 1:  # the later turns, their earlier answers unknown yet
                reqs = [*reqs, *(task.turn_request(s, [""] * k, chat=is_chat, settings=req, sample_index=r.sample_index)
                                 for r in reqs for k in range(1, task.n_turns))]
            answer_tokens = None
            for r in reqs:
                prompts.append(request_text(r))
                if isinstance(r, LoglikelihoodRequest):
                    outs.append(0)
                elif output_tokens == "max":
                    outs.append(int(r.max_tokens))
                elif output_tokens == "answer":
                    if answer_tokens is None:
                        answer_tokens = counter(task.render_answer(s))
                    outs.append(min(int(r.max_tokens), answer_tokens))
                else:
                    outs.append(min(int(r.max_tokens), int(output_tokens)))
            item_texts.setdefault(task.spec.language, []).append(item_text(task, s))
        prompt_texts.setdefault(task.spec.language, []).extend(prompts)
        est = estimate_cost(prompts, outs, price_name, prices=prices, count_tokens=counter)
        basis = (f"0 ({mode})" if mode in ("loglikelihood", "loglikelihood_rolling") else
                 {"max": "max_tokens", "answer": "gold answer tokens"}.get(output_tokens, f"{output_tokens} per request")
                 if isinstance(output_tokens, str) else f"{output_tokens} per request")
        results.append(TaskEstimate(task.name, task.spec.language, len(samples), mode, est, basis))
        if mode == "generate" and task.n_turns > 1:
            notes.append(f"{task.name}: {task.n_turns} turns per item; a later turn's input counts the earlier user "
                         f"turns but not the model's earlier answers, which are sent back too (unknown before the run): "
                         f"its input tokens are a floor")
        for n in est.notes:
            if n not in notes:
                notes.append(n)
    if not results:
        raise GlotbenchError("estimate: no tasks selected")
    per_language = {
        lang: {"prompt": tokens_per_word(prompt_texts[lang], counter), "items": tokens_per_word(item_texts[lang], counter)}
        for lang in prompt_texts
    }
    basis = {"max": "max_tokens per request (the task's generation.max_tokens unless --max-tokens): an upper bound",
             "answer": "the gold answer's tokens as the task's few-shot answer template writes it (a terse model): a floor"}
    first = results[0].estimate
    notes.append("chat-template tokens (role markers) are not counted")
    return RunEstimate(
        model=model, price_name=price_name, tasks=results, token_method=counter.method, approximate=counter.approximate,
        output_basis=basis.get(output_tokens, f"{output_tokens} tokens per request (capped at max_tokens)")
        if isinstance(output_tokens, str) else f"{output_tokens} tokens per request (capped at max_tokens)",
        per_language=per_language, currency=first.currency, price_taken=first.price_taken,
        price_source=first.price_source, notes=notes,
    )
