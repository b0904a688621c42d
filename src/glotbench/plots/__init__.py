"""Static PNG charts (matplotlib, Agg backend): reliability diagrams, accuracy@k curves."""
