"""glotbench's version (``glotbench.__version__``), a leaf every layer may import."""

__version__ = "0.1.0"
