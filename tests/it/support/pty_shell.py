"""Drive one interactive shell through a pseudo-terminal (stdlib only).

usage: python3 pty_shell.py SHELL-ARGV-JSON

The shell's environment is this process's. Requests arrive on stdin, one
JSON string per line: a command line to type. For each, the driver types
the line, then a marker command, and waits (bounded) until the marker's
output appears; it answers with one JSON object per line:
{"out": <everything the terminal showed in between>} or, when the marker
never came, {"error": "timeout", "out": ...}. A first answer is sent once
the shell is up. Every read is bounded, so a broken hook fails the test
instead of hanging it.
"""

import json
import os
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ beside the tests
from pty_common import TIMEOUT, kill, read, spawn  # noqa: E402


def main():
    argv = json.loads(sys.argv[1])
    pid, fd = spawn(argv)
    buf = b""
    n = 0

    def read_until(token):
        nonlocal buf
        deadline = time.monotonic() + TIMEOUT
        while token not in buf:
            chunk = read(fd, deadline)
            if not chunk:
                return False
            buf += chunk
        return True

    def step(line):
        nonlocal buf, n
        n += 1
        token = ("@@MARK%d@@" % n).encode()
        buf = b""
        if line is not None:
            os.write(fd, line.encode() + b"\n")
        # The marker is printed by its own command line, so it appears only
        # after the prompt (and the hook) that follows `line`.
        os.write(fd, ("printf '%%s%%s\\n' '@@MARK' '%d@@'\n" % n).encode())
        ok = read_until(token)
        out = buf.decode("utf-8", "replace")
        ans = {"out": out} if ok else {"error": "timeout", "out": out}
        sys.stdout.write(json.dumps(ans) + "\n")
        sys.stdout.flush()
        return ok

    if not step(None):
        return 1
    for req in sys.stdin:
        req = req.strip()
        if not req:
            continue
        if not step(json.loads(req)):
            break
    try:
        os.write(fd, b"exit\n")
    except OSError:
        pass
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done:
            return 0
        if read(fd, time.monotonic() + 0.1) is None:
            break
    kill(pid)
    return 0


if __name__ == "__main__":
    sys.exit(main())
