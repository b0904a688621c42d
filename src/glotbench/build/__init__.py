"""`glotbench build`: make a native-language benchmark from native material, the way the seed
papers made theirs. Each step reads a corpus or a dataset (JSONL) and writes a dataset (JSONL) in
which every item carries its provenance; the last step writes a task YAML `glotbench run` accepts.
See docs/building-a-benchmark.md."""
