"""Analyses over finished runs: reasoning traces (thinking), cross-lingual gaps, option bias..."""
