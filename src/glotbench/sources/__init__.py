"""Where a task's data comes from, and getting it: the ``source.fetch`` schema (:mod:`.schema`),
the user's cache and lock file, downloads from GitHub, the Hugging Face Hub and plain URLs, and
the provenance a run records (docs/data.md)."""
