"""Exceptions of graphkern. Input errors are plain ``ValueError``/``TypeError`` (see ``_validate``)."""


class GraphkernError(Exception):
    """Base class of graphkern's own errors."""


class BackendUnavailableError(GraphkernError, RuntimeError):
    """The requested backend cannot run here (no GPU, no driver, simulator not enabled, ...)."""


class Graph500ValidationError(GraphkernError, AssertionError):
    """A BFS result broke one of the five Graph500 validation rules."""


class DistributedError(GraphkernError, ValueError):
    """Raised on every rank of a communicator when one or more ranks passed a wrong argument, or the ranks
    disagree on an argument that must be the same on all of them (graphkern.distributed).

    The message is the same on every rank: the failing ranks and the first failing rank's own message.

    Attributes
    ----------
    ranks : tuple of int
        The failing ranks, ascending (empty when the error was raised before any communication).
    first_message : str
        The message of the lowest failing rank, without the rank prefix.
    problems : dict of int to str
        Each failing rank's message.
    """

    def __init__(self, message: str, *, ranks=(), first_message: str | None = None, problems=None):
        super().__init__(message)
        self.ranks = tuple(int(r) for r in ranks)
        self.first_message = message if first_message is None else first_message
        self.problems = dict(problems or {})
