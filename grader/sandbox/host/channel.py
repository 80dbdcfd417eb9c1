"""The grader's end of one worker's channel: length-prefixed msgpack frames, with time
limits on sending and on replies."""

from __future__ import annotations

import queue
import socket
import threading
from typing import IO

from grader.locale import tr
from grader.sandbox.wire.encoding import ProtocolError
from grader.sandbox.wire.frames import pack, read_frame

# Frames up to this size are written directly; larger ones under a deadline.
SMALL_FRAME = 4096


class SendTimeout(Exception):
    """A frame was not taken by the worker in time."""


class WorkerDied(Exception):
    """The worker stopped answering: it exited, crashed or ran out of time."""

    def __init__(self, message: str, timed_out: bool = False, busy: bool = False) -> None:
        super().__init__(message)
        self.timed_out = timed_out
        # Out of time on a busy machine that gave it too little CPU to tell slow from
        # endless (grader.sandbox.host.slow_or_endless.starved).
        self.busy = busy


def close_quietly(*ends: IO[bytes] | socket.socket) -> None:
    """Close each of `ends` in turn: one that is already broken must not keep the
    others open."""
    for end in ends:
        try:
            end.close()
        except OSError:
            pass


class Channel:
    """Length-prefixed msgpack frames to and from one worker, with time limits on replies."""

    def __init__(self, reader: IO[bytes], writer: IO[bytes]) -> None:
        self.reader, self.writer = reader, writer
        self.replies: queue.Queue = queue.Queue()
        # Who closes the reader: close() if the reading thread is done, else that
        # thread once its read returns (see close()).
        self._ending = threading.Lock()
        self._closed = self._read_done = False
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        try:
            while True:
                message = read_frame(self.reader)
                self.replies.put(message)
                if message is None:
                    return
        except (ProtocolError, OSError, ValueError) as exc:
            self.replies.put(exc)
        finally:
            with self._ending:
                self._read_done = True
                if self._closed:
                    close_quietly(self.reader)

    def send(self, message: dict, timeout: float) -> None:
        """Write one frame, or raise SendTimeout if the worker has not taken it all
        within `timeout` seconds (a worker that stops reading must not hang the grader)."""
        frame = pack(message)
        if len(frame) <= SMALL_FRAME:
            # The protocol is one request, then its reply: the worker has read all
            # that came before, so a frame this small fits in the empty buffer.
            self._write(frame)
            return
        done = threading.Event()
        failed: list[BaseException] = []

        def write() -> None:
            try:
                self._write(frame)
            except BaseException as exc:  # noqa: BLE001 - handed to the caller
                failed.append(exc)
            finally:
                done.set()

        threading.Thread(target=write, daemon=True).start()
        # Ended from here, the worker closes its end, and the write fails at once.
        if not done.wait(timeout):
            raise SendTimeout(tr("it read nothing of what the grader sent for {timeout:g} "
                                 "seconds (it stopped reading?)", timeout=timeout))
        if failed:
            raise failed[0]

    def _write(self, frame: bytes) -> None:
        self.writer.write(frame)
        self.writer.flush()

    def close(self) -> None:
        close_quietly(self.writer)
        # A process the worker started in a session of its own (a daemon) may hold the
        # pipe open after the worker is gone, where nothing ends it (the spawned path
        # without a sandbox), and closing a reader blocks until another thread's read
        # of it returns: that read then closes it, whenever the pipe ends.
        with self._ending:
            self._closed = True
            if self._read_done:
                close_quietly(self.reader)
