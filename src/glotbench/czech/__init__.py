"""Czech benchmark material (Czech-Bench; Klokánek)."""
