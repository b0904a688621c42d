"""Dataset translation, Czech-Bench's way (thesis §5.2): see :mod:`glotbench.translate.pipeline`."""
