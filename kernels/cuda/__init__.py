"""CUDA twins of the kernels in ``graphkern.kernels.cpu`` (numba-cuda), same module and function names.

Importing any module here imports ``numba.cuda``; graphkern does that only on the CUDA path, after
``NUMBA_ENABLE_CUDASIM`` has had its chance to be set. Kernels use grid-stride loops, so a launch shape
(:mod:`.launch`) is a performance choice, never a correctness one: the simulator runs the same kernels
on one small block.
"""
