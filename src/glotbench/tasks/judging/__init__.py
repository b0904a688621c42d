"""The task side of judging: a judge declared in YAML (``declaration.py`` its schema and checks,
``declared.py`` its prompt, reply reading and per-item values), the grading prompts read from JSON
files (``prompts.py``) and the named reply rules (``parse.py``, ``reference_parse.py``). What runs
judges over finished runs on the engine (pairwise judging, judge agreement) is ``glotbench.judges``."""
