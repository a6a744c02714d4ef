"""The CPU driver package: the host side of graphkern's kernels on the CPU backend.

It and ``graphkern._cuda`` are twins: the same module names, and in each module the same public classes
and functions with the same parameters (tests/test_twins.py compares them from the source), so that
host code picks a backend once (:func:`graphkern._backend.driver`) and calls either the same way. The
front ends validate and plan a call; these modules run it.

- :mod:`.sparse`: ``spmm``, ``sddmm`` and ``edge_softmax``, each the run of a validated, planned call.
- :mod:`.bfs`: ``search`` and ``searches``, the breadth-first searches a plan chose.
- :mod:`.segment`: ``segment_mm``, ``gather_mm`` and ``segment_mm_backward_b``.
- :mod:`.formats`: the sort and scan steps that build a :class:`~graphkern.Graph`'s formats.
- :mod:`.pma`: ``PackedStorage``, the packed memory array of a :class:`~graphkern.DynamicGraph`.
- :mod:`.incremental`: ``SearchState``, the levels, parents and steps of an
  :class:`~graphkern.IncrementalBFS`.
"""
