"""A Ctrl-C that no finaliser and no import can swallow.

Python raises KeyboardInterrupt wherever the main thread happens to be when the
SIGINT handler runs. Inside a `__del__` method, a weakref callback or a garbage
collection's finaliser, the exception cannot propagate: Python reports it as
"ignored" (to a stderr that pytest captures during a grade) and goes on, and the
grade runs to its end as if no key had been pressed. While checks run, the handler
here also remembers the press, and the engine stops at the next check.

Inside an import it is worse. Raised in the middle of torch's, the KeyboardInterrupt
was swallowed by torch, which takes a numpy that fails to import as no numpy: the
grade ran on to its time budget (a Ctrl-C 1.1 s into a grade, 3 times in 20). It
also left numpy half loaded (the next import failed) or aborted the process from
torch's C++ (SIGABRT, its scratch folder left behind). So the command's handlers
(`interrupt`, `terminate`) never raise inside an import: there the signal is sent
again a moment later, until it arrives once the import is done.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import NoReturn

# The delay before a signal that arrived inside an import is sent again.
AGAIN_AFTER = 0.05

_pressed = threading.Event()
# SIGTERM or SIGHUP: remembered for the whole command, since the KeyboardInterrupt it
# raises may be swallowed before the checks start too (by a finaliser, say).
_terminated = threading.Event()
# KeyboardInterrupts raised so far, by a handler here or by the engine (`stop`). A
# signal deferred past an import is dropped if one was raised since it arrived: the
# command acted on it already, and a second one cut short the clean-up the first
# started (a grade's scratch folder was left behind).
_stops = 0
# Signal number -> `_stops` when it first arrived inside an import, while it waits.
_deferred: dict[int, int] = {}
# Whether the signal on its way is one sent again from here, not one from outside.
_sent_again = threading.Event()


def stop() -> NoReturn:
    """Raise the KeyboardInterrupt that stops the command, counting it."""
    global _stops
    _stops += 1
    raise KeyboardInterrupt


def _deliver(signum: int, frame: FrameType | None) -> None:
    """Interrupt, unless inside an import (then later) or already acted on."""
    arrived = _stops
    if _sent_again.is_set():
        _sent_again.clear()
        arrived = _deferred.pop(signum, _stops)
        if _stops > arrived:
            return
    if _importing(frame):
        _deferred[signum] = arrived
        again = threading.Timer(AGAIN_AFTER, _send_again, (signum,))
        again.daemon = True
        again.start()
        return
    stop()


def _send_again(signum: int) -> None:
    if _stops > _deferred.get(signum, _stops):
        _deferred.pop(signum, None)
        return
    _sent_again.set()
    os.kill(os.getpid(), signum)


def _importing(frame: FrameType | None) -> bool:
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib"):
            return True
        frame = frame.f_back
    return False


def interrupt(signum: int, frame: FrameType | None) -> None:
    """The command's handler of SIGINT: Python's, but never inside an import."""
    _deliver(signum, frame)


def terminate(signum: int, frame: FrameType | None) -> None:
    """The handler of SIGTERM and SIGHUP: remember them, and interrupt as Ctrl-C does."""
    _terminated.set()
    _deliver(signum, frame)


def terminated() -> bool:
    """Whether the command was ended from outside (SIGTERM or SIGHUP)."""
    return _terminated.is_set()


def _remember_and_interrupt(signum: int, frame: FrameType | None) -> None:
    _pressed.set()
    _deliver(signum, frame)


@contextlib.contextmanager
def remembered() -> Iterator[None]:
    """Remember a Ctrl-C pressed in this block. Python's own handler, or the command's
    (`interrupt`), is replaced only where it is the one in place (any other, a
    program's own, is left alone), and only from the main thread, the one signals
    reach."""
    _pressed.clear()
    before: Callable | int | None = signal.getsignal(signal.SIGINT)
    if (threading.current_thread() is not threading.main_thread()
            or before not in (signal.default_int_handler, interrupt)):
        yield
        return
    signal.signal(signal.SIGINT, _remember_and_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


def pressed() -> bool:
    """Whether Ctrl-C was pressed in the last `remembered()` block, or the command was
    ended from outside, even where its first KeyboardInterrupt was swallowed."""
    return _pressed.is_set() or _terminated.is_set()
