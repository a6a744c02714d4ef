"""CUDA twins of the kernels in ``graphkern.kernels.cpu`` (numba-cuda), same module and function names.

Not in this version: the CUDA backend is an open issue. Until it lands, ``backend="cuda"`` raises
``graphkern.BackendUnavailableError`` without a usable device, and the public functions refuse device
arrays with a message that says so; nothing falls back to the CPU silently.
"""
