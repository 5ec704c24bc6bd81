"""SIGINT, SIGTERM and SIGHUP end a run the same way: as an `Interrupted` exception (a
KeyboardInterrupt carrying the signal), so that the output so far is kept and the command line
exits with 128 + the signal number.

`handled()` installs the handlers for a block (main thread only; elsewhere it does nothing).
Inside `deferred()` blocks a signal is held until the block ends: the run loop wraps each graph
replay with its bookkeeping, each output and each checkpoint in one, so an interrupt never
leaves a half-written snapshot or a state whose host half lags its device half. A second
signal while one is held interrupts at once.
"""

import signal
import threading
from contextlib import contextmanager

SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP")
                if hasattr(signal, name))


class Interrupted(KeyboardInterrupt):
    """A run ended by a signal (signum); exit status 128 + signum."""

    def __init__(self, signum):
        super().__init__(signal.Signals(signum).name)
        self.signum = int(signum)

    @property
    def signal_name(self):
        return signal.Signals(self.signum).name


_state = {"installed": 0, "deferring": 0, "pending": None}


def _handler(signum, _frame):
    if _state["deferring"] and _state["pending"] is None:
        _state["pending"] = signum
        return
    _state["pending"] = None
    raise Interrupted(signum)


@contextmanager
def handled():
    """Turn SIGINT, SIGTERM and SIGHUP into Interrupted for the duration (nests)."""
    if threading.current_thread() is not threading.main_thread() or _state["installed"]:
        yield  # signals are delivered to the main thread; an outer block has them already
        return
    previous = {signum: signal.signal(signum, _handler) for signum in SIGNALS}
    _state["installed"] = 1
    try:
        yield
    finally:
        _state["installed"] = 0
        _state["pending"] = None
        for signum, handler in previous.items():
            signal.signal(signum, handler)


@contextmanager
def deferred():
    """Hold a signal that arrives inside the block until it ends (then raise Interrupted)."""
    _state["deferring"] += 1
    try:
        yield
    finally:
        _state["deferring"] -= 1
    if not _state["deferring"] and _state["pending"] is not None:
        signum, _state["pending"] = _state["pending"], None
        raise Interrupted(signum)
