"""``glotbench run --write-out N``: print the requests the first N items of each task would send.

No model is loaded or called: chat vs plain prompts follow ``--model-args chat=...`` (chat unless
it says false), which is what the backends default to.
"""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape

from glotbench.tasks.names import DEFAULT_SUITE
from glotbench.settings import RunSettings


def write_out(cfg: RunSettings, n: int, console: Console) -> int:
    """Print the prompts; returns the number of items shown."""
    from glotbench.engine.plan import drop_tasks_without_data
    from glotbench.tasks.modes import task_mode
    from glotbench.tasks.registry import resolve
    from glotbench.tasks.request_settings import RequestSettings

    rs = RequestSettings.from_values(cfg.model_dump())
    from glotbench.tasks.variants import expand

    tasks, skipped = drop_tasks_without_data(resolve(cfg.tasks or [DEFAULT_SUITE]), cfg)
    tasks = expand(tasks, cfg.prompt_variants)  # --prompt-variants: each variant's prompts too
    chat = cfg.model_args.get("chat", True) is not False
    shown = 0
    for task in tasks:
        mode = task_mode(task, rs)
        for sample in task.run_samples(rs)[:n]:
            console.rule(f"{task.name} · item {sample.id} · {mode} · {'chat' if chat else 'plain'}")
            reqs = task.requests(sample, mode=mode, chat=chat, settings=rs)
            for k, req in enumerate(reqs):
                d = req.to_dict()
                if d.get("messages"):
                    for m in d["messages"]:
                        console.print(f"[bold]\\[{m.get('role')}][/]\n{escape(str(m.get('content')))}")
                elif "context" in d and not d["context"]:  # a text scored by its own log-likelihood
                    console.print(f"[bold]text:[/] {escape(repr(d['continuation']))}")
                elif "context" in d:
                    if k == 0:
                        console.print(escape(d["context"]))
                    console.print(f"[bold]option {k}:[/] {escape(repr(d['continuation']))}")
                else:
                    console.print(escape(str(d.get("prompt"))))
                if "max_tokens" in d:
                    console.print(f"[dim](max_tokens={d['max_tokens']}, temperature={d['temperature']}, stop={d['stop']})[/]")
            console.print(f"[dim]gold: {escape(repr(sample.target))}[/]")
            shown += 1
    for name, why in skipped.items():
        console.print(f"[yellow]skipped[/] {name}: {why}")
    return shown
