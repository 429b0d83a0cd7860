"""A small FCOS-style detector in PyTorch (:mod:`.torch_fcos`) and its MindSpore port
(:mod:`.ms_fcos`), trained side by side from the same converted weights on the same seeded
synthetic batches (:mod:`.data`) by :mod:`.train`; :mod:`.dist_train` runs the MindSpore
training under ``msrun`` data parallel. See ``docs/prove_your_port.rst``.

Run ``python -m examples.fcos_port.train --steps 100`` from the repository root.
"""
