"""Run one program on a pseudo-terminal and type into it (stdlib only).

usage: python3 pty_run.py ARGV-JSON STEPS-JSON

STEPS is a list of [wait_for, type]: wait (bounded) until the terminal has
shown `wait_for` since the previous step, then type `type` (both strings;
"\\u0003" is Ctrl-C; "!signal:N" sends signal N to the program instead). After the last step the driver reads until the program
closes the terminal and exits. It prints one JSON object:
{"out": everything the terminal showed, "status": the exit status (or
-signal), "error": null or what went wrong ("timeout waiting for …")}.
The program is the session leader of the new terminal, so /dev/tty is it.
The terminal's settings after the program ended are reported too
("echo_after": whether ECHO is on), so a test can see they were restored.
"""

import json
import os
import sys
import termios
import time

sys.dont_write_bytecode = True  # no __pycache__ beside the tests
from pty_common import TIMEOUT, kill, read, spawn  # noqa: E402


def main():
    argv = json.loads(sys.argv[1])
    steps = json.loads(sys.argv[2])
    pid, fd = spawn(argv)
    seen = b""
    out = b""
    error = None

    def pump(deadline):
        nonlocal seen, out
        chunk = read(fd, deadline)
        if not chunk:
            return False
        seen += chunk
        out += chunk
        return True

    for wait_for, typed in steps:
        token = wait_for.encode()
        deadline = time.monotonic() + TIMEOUT
        while token not in seen:
            if not pump(deadline):
                error = "timeout or end waiting for %r" % wait_for
                break
        if error:
            break
        seen = seen[seen.index(token) + len(token):]
        time.sleep(0.05)
        if typed.startswith("!signal:"):
            os.kill(pid, int(typed[len("!signal:"):]))
        else:
            os.write(fd, typed.encode("latin-1"))
    echo_after = None
    deadline = time.monotonic() + TIMEOUT
    status = None
    while True:
        done, st = os.waitpid(pid, os.WNOHANG)
        if done:
            status = os.waitstatus_to_exitcode(st)
            break
        if time.monotonic() > deadline:
            kill(pid)
            error = error or "timeout waiting for the exit"
            break
        if not pump(min(deadline, time.monotonic() + 0.1)):
            time.sleep(0.01)
    while True:
        chunk = read(fd, time.monotonic() + 0.2)
        if not chunk:
            break
        out += chunk
    try:
        echo_after = bool(termios.tcgetattr(fd)[3] & termios.ECHO)
    except termios.error:
        pass
    print(
        json.dumps(
            {
                "out": out.decode("latin-1"),
                "status": status,
                "error": error,
                "echo_after": echo_after,
            }
        )
    )


if __name__ == "__main__":
    main()
