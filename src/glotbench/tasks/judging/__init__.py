"""A judge a task declares: its YAML schema and checks, prompt, reply rules (judging finished runs
on the engine is ``glotbench.judges``)."""
