"""glotbench's version, for modules of every layer (importing it from ``glotbench`` would be an edge up
to the package root, whose lazy API attributes reach the engine)."""

__version__ = "0.1.0"
