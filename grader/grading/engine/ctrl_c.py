"""A Ctrl-C that no finaliser can swallow.

Python raises KeyboardInterrupt wherever the main thread happens to be when the
SIGINT handler runs. Inside a `__del__` method, a weakref callback or a garbage
collection's finaliser, the exception cannot propagate: Python reports it as
"ignored" (to a stderr that pytest captures during a grade) and goes on, and the
grade runs to its end as if no key had been pressed. While checks run, the handler
here also remembers the press, and the engine stops at the next check.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from types import FrameType
from typing import NoReturn

_pressed = threading.Event()
# SIGTERM or SIGHUP (grader/learner/output.py takes them as a Ctrl-C): remembered for
# the whole command, since the KeyboardInterrupt it raises may be swallowed before the
# checks start too (by a finaliser, or by an import it cut short).
_terminated = threading.Event()
# Whether the KeyboardInterrupt that stops the command has been raised, by a handler
# here or by the engine (`stop`): a signal deferred past an import and sent again
# after that must not raise a second one, in the middle of the clean-up the first
# started (a grade's scratch folder was left behind by one).
_raised = threading.Event()
# Whether the signal on its way is one sent again from here, not one from outside.
_sent_again = threading.Event()


def terminate(signum: int, frame: FrameType | None) -> None:
    """The handler of SIGTERM and SIGHUP: remember them, and interrupt as Ctrl-C does.

    Not inside an import: raised in the middle of torch's, the KeyboardInterrupt left
    numpy half loaded (the next import failed) or aborted the process from torch's C++
    (SIGABRT, its scratch folder left behind). There the signal is sent again a moment
    later, until it arrives once the import is done, unless the command is stopping
    by then."""
    _terminated.set()
    if _sent_again.is_set():
        _sent_again.clear()
        if _raised.is_set():
            return
    if _importing(frame):
        again = threading.Timer(0.05, _send_again, (signum,))
        again.daemon = True
        again.start()
        return
    stop()


def _send_again(signum: int) -> None:
    if _raised.is_set():
        return
    _sent_again.set()
    os.kill(os.getpid(), signum)


def stop() -> NoReturn:
    """Raise the KeyboardInterrupt that stops the command, noting that it was raised."""
    _raised.set()
    raise KeyboardInterrupt


def _importing(frame: FrameType | None) -> bool:
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib"):
            return True
        frame = frame.f_back
    return False


def terminated() -> bool:
    """Whether the command was ended from outside (SIGTERM or SIGHUP)."""
    return _terminated.is_set()


def _remember_and_interrupt(signum: int, frame: FrameType | None) -> None:
    _pressed.set()
    raise KeyboardInterrupt


@contextlib.contextmanager
def remembered() -> Iterator[None]:
    """Remember a Ctrl-C pressed in this block. Python's own handler is replaced
    only where it is the one in place (any other, a program's own, is left alone),
    and only from the main thread, the one signals reach."""
    _pressed.clear()
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
        yield
        return
    signal.signal(signal.SIGINT, _remember_and_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pressed() -> bool:
    """Whether Ctrl-C was pressed in the last `remembered()` block, or the command was
    ended from outside, even where its first KeyboardInterrupt was swallowed."""
    return _pressed.is_set() or _terminated.is_set()
