"""A small RetinaNet-style detector in PyTorch, written for ``mscompat scan`` to analyse.

It is a porting target, not part of mscompat: it is scanned (``mscompat scan examples/detector``),
never imported or run by the tests. It needs ``torch`` and ``torchvision`` to run.
"""
