"""What the two pseudo-terminal drivers share (stdlib only): start a
program on a new terminal, and read what the terminal shows, bounded.

pty_run.py types a fixed script into one program; pty_shell.py types the
lines it is sent into an interactive shell.
"""

import os
import pty
import select
import time

TIMEOUT = 30.0


def spawn(argv):
    """Start `argv` as the session leader of a new terminal (so /dev/tty is
    that terminal): returns (pid, fd of the terminal's master side)."""
    pid, fd = pty.fork()
    if pid == 0:
        try:
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)
    return pid, fd


def read(fd, deadline):
    """The next bytes the terminal shows before `deadline` (a
    time.monotonic() value): b"" when none came in time, None once the
    terminal is closed."""
    left = deadline - time.monotonic()
    if left <= 0:
        return b""
    r, _, _ = select.select([fd], [], [], left)
    if not r:
        return b""
    try:
        chunk = os.read(fd, 65536)
    except OSError:
        return None
    return chunk or None


def kill(pid):
    """Kill the program and reap it; it may be gone already."""
    try:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
    except OSError:
        pass
