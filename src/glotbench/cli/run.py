"""`glotbench run`: evaluate a model on tasks and suites."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from glotbench.cli import app


@app.command()
def run(
    model: Optional[str] = typer.Option(None, "--model", "-m", help="embedded (default SmolLM2), llamacpp:/path.gguf, openai:NAME, anthropic:NAME, vllm:NAME, ollama:NAME"),
    tasks: Optional[list[str]] = typer.Option(None, "--tasks", "-t", help="Task, suite or glob names; repeat or comma-separate."),
    suite: Optional[list[str]] = typer.Option(None, "--suite", help="Suite names (same as --tasks)."),
    config: Optional[Path] = typer.Option(None, "--config", "-c", help="Run config YAML; flags override it."),
    base_url: Optional[str] = typer.Option(None, "--base-url", help="OpenAI-compatible server URL, e.g. http://127.0.0.1:8000/v1"),
    api_key_env: Optional[str] = typer.Option(None, "--api-key-env", help="Environment variable holding the API key."),
    limit: Optional[int] = typer.Option(None, "--limit", "-n", help="First N items of each task."),
    seed: Optional[int] = typer.Option(None, "--seed"),
    num_fewshot: Optional[int] = typer.Option(None, "--num-fewshot"),
    concurrency: Optional[int] = typer.Option(None, "--concurrency", "-j"),
    temperature: Optional[float] = typer.Option(None, "--temperature"),
    max_tokens: Optional[int] = typer.Option(None, "--max-tokens"),
    samples: Optional[int] = typer.Option(None, "--samples", help="Answers drawn per item (Best-of-N)."),
    mode: Optional[str] = typer.Option(None, "--mode", help="generate (parse answers) or loglikelihood (compare option log-probabilities)."),
    split: Optional[str] = typer.Option(None, "--split"),
    prompt_lang: Optional[str] = typer.Option(None, "--prompt-lang", help="Prompt variant for tasks that ship several (OpenHuEval: hu or en)."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Run directory (default: runs/<model>/<hash of the command>)."),
    timeout: Optional[float] = typer.Option(None, "--timeout", help="Per-request timeout, seconds."),
    max_retries: Optional[int] = typer.Option(None, "--max-retries"),
    judge: Optional[str] = typer.Option(None, "--judge", help="Judge model for judge-graded tasks (same spec syntax as --model)."),
    judge_base_url: Optional[str] = typer.Option(None, "--judge-base-url", help="Server URL for an OpenAI-compatible judge."),
    predictions_out: Optional[Path] = typer.Option(None, "--predictions-out", help="Write leaderboard submission files here (HuLU tasks)."),
    no_progress: bool = typer.Option(False, "--no-progress"),
) -> None:
    """Evaluate a model; re-running the same command resumes from the journal."""
    from glotbench.engine.config import RunConfig, load_config
    from glotbench.engine.session import run_evaluation
    from glotbench.output.table import print_results

    cfg = load_config(config) if config else RunConfig()
    overrides = {
        "model": model, "base_url": base_url, "api_key_env": api_key_env, "limit": limit, "seed": seed,
        "num_fewshot": num_fewshot, "concurrency": concurrency, "temperature": temperature, "max_tokens": max_tokens,
        "samples": samples, "mode": mode, "split": split, "prompt_lang": prompt_lang, "output": str(output) if output else None, "timeout": timeout,
        "max_retries": max_retries, "judge": judge,
    }
    names = list(tasks or []) + list(suite or [])
    if names:
        overrides["tasks"] = names
    cfg = RunConfig.model_validate({**cfg.model_dump(), **{k: v for k, v in overrides.items() if v is not None}})
    if judge_base_url:
        cfg.judge_args["base_url"] = judge_base_url
    console = Console(stderr=True, soft_wrap=True)
    try:
        results, out_dir = run_evaluation(cfg, console=console, show_progress=not no_progress)
    except KeyboardInterrupt:
        console.print("[yellow]interrupted[/]: everything finished so far is in the journal; run the same command again to resume")
        raise typer.Exit(130)
    out = Console(width=None if sys.stdout.isatty() else 160)
    print_results(results, out)
    out.print(f"results: {out_dir / 'results.json'} · samples: {out_dir / 'samples.jsonl'}", soft_wrap=True)
    session = (results["run"].get("sessions") or [results["run"]])[-1]
    if session.get("requests_sent") == 0 and (session.get("failed_requests") or 0) > 0:
        # nothing got through (an unreachable server, a wrong URL or key): say so on one line
        first = results["errors"][0]["error"] if results["errors"] else "every request failed"
        typer.echo(f"error: no request succeeded ({session['failed_requests']} failed): {first}", err=True)
        raise typer.Exit(2)
    if predictions_out:
        from glotbench.output.submissions import build_submissions

        for s in build_submissions(out_dir, predictions_out):
            if s.path is None:
                console.print(f"[yellow]warning[/]: no submission for {s.task}: {s.skipped}")
                continue
            out.print(f"submission: {s.path}", soft_wrap=True)
            if s.n_missing:
                console.print(f"[yellow]warning[/]: {s.path} covers {s.n_items - s.n_missing} of {s.n_items} "
                              f"{s.split} items ({s.n_missing} never run: --limit or an interrupted run); "
                              "the leaderboard rejects a partial file")
