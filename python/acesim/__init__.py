"""acesim: interconnection-network simulator (Python package; the full API lands with issue 4)."""
