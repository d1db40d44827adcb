import sys
def _agentenv_load():
    import os
    fd = int(sys.argv.pop(1))
    del sys.argv[0]
    os.lseek(fd, 0, 0)
    parts = []
    while True:
        b = os.read(fd, 1 << 16)
        if not b:
            break
        parts.append(b)
    os.close(fd)
    path = sys.argv[0]
    sys.path[0] = os.path.dirname(os.path.realpath(path))
    g = {"__name__": "__main__", "__file__": path, "__builtins__": __builtins__,
         "__doc__": None, "__package__": None, "__spec__": None, "__loader__": None}
    return compile(b"".join(parts), path, "exec"), g
_agentenv_code, _agentenv_globals = _agentenv_load()
del _agentenv_load
exec(_agentenv_code, _agentenv_globals)
