"""glotbench: evaluate language models on native-language benchmarks."""

__version__ = "0.1.0"
