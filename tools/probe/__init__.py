"""The API probe: which MindSpore callable can stand in for each PyTorch API, measured.

It writes ``mscompat/scan/data/api_knowledge.json``, the knowledge behind ``mscompat scan``.
Nothing in that file is typed by hand: for every case of the table, the PyTorch API runs with
``torch`` on a small seeded input, each MindSpore candidate (``mindspore.mint``, then
``mindspore.ops``, then ``mindspore.nn`` Cells, then ``Tensor`` methods, then the adapted calls
named in the case) runs with the same call, and the outcome is recorded (see
:mod:`tools.probe.measure` for the stages and statuses).

* ``cases.toml``: the case table, data only;
* :mod:`tools.probe.table`: reads it, and builds each case's seeded inputs;
* :mod:`tools.probe.scripted`: the code cases name (scripted cases, adapted calls, NumPy
  references);
* :mod:`tools.probe.measure`: one case, on :mod:`mscompat.testing.parity`;
* :mod:`tools.probe.run`: worker processes and the knowledge file (``tools/probe_apis.py``).

Status of a candidate: ``OK``, ``NO-GRAD``, ``GRAPH-FAILS``, ``DIFFERS`` (the call is rejected,
or runs with another result, or only an adapted call works), ``CPU-UNREGISTERED`` (a kernel error
on this backend; the name is kept for every backend), ``MISSING`` (no candidate exists). The best
candidate wins (OK < NO-GRAD < GRAPH-FAILS < DIFFERS < CPU-UNREGISTERED).
"""
