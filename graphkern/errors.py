"""Exceptions of graphkern. Input errors are plain ``ValueError``/``TypeError`` (see ``_validate``)."""


class GraphkernError(Exception):
    """Base class of graphkern's own errors."""


class BackendUnavailableError(GraphkernError, RuntimeError):
    """The requested backend cannot run here (no GPU, no driver, simulator not enabled, ...)."""


class Graph500ValidationError(GraphkernError, AssertionError):
    """A BFS result broke one of the five Graph500 validation rules."""
