"""PyTorch references for the op database (imported lazily: torch is a test/parity extra)."""
