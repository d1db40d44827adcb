"""Run a command under Landlock, confined like a workspace-write sandbox:
it may read everything but write (create, remove, rename, truncate) only
under the paths given with --rw. Python's stdlib only (ctypes).

    landlock.py --probe              -> prints the kernel's Landlock ABI (exit 1: none)
    landlock.py --rw DIR ... -- CMD ARGS...
"""
import ctypes
import os
import sys

SYS_CREATE, SYS_ADD, SYS_RESTRICT = 444, 445, 446  # x86_64 and aarch64 alike
PR_SET_NO_NEW_PRIVS = 38
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def abi():
    return libc.syscall(SYS_CREATE, None, ctypes.c_size_t(0), ctypes.c_uint32(1))


class RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64)]


class PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def main(argv):
    if argv[:1] == ["--probe"]:
        v = abi()
        print(v)
        return 0 if v > 0 else 1
    rw = []
    while argv and argv[0] == "--rw":
        rw.append(argv[1])
        argv = argv[2:]
    if argv[:1] != ["--"] or len(argv) < 2:
        sys.exit("usage: landlock.py --rw DIR ... -- CMD ARGS...")
    cmd = argv[1:]
    v = abi()
    if v < 1:
        sys.exit("landlock.py: the kernel has no Landlock")
    write_file, truncate = 1 << 1, 1 << 14
    # Everything that writes: write_file, remove_dir/file, make_* (4..12),
    # refer (13, ABI 2), truncate (14, ABI 3).
    handled = write_file | sum(1 << b for b in range(4, 13))
    if v >= 2:
        handled |= 1 << 13
    if v >= 3:
        handled |= truncate
    attr = RulesetAttr(handled)
    rs = libc.syscall(SYS_CREATE, ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)), ctypes.c_uint32(0))
    if rs < 0:
        sys.exit("landlock.py: create_ruleset: %s" % os.strerror(ctypes.get_errno()))
    for p in rw:
        fd = os.open(p, os.O_PATH | os.O_CLOEXEC)
        access = handled if os.path.isdir(p) else handled & (write_file | truncate)
        rule = PathBeneath(access, fd)
        if libc.syscall(SYS_ADD, ctypes.c_int(rs), ctypes.c_int(1), ctypes.byref(rule), ctypes.c_uint32(0)) < 0:
            sys.exit("landlock.py: add_rule %s: %s" % (p, os.strerror(ctypes.get_errno())))
        os.close(fd)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        sys.exit("landlock.py: no_new_privs failed")
    if libc.syscall(SYS_RESTRICT, ctypes.c_int(rs), ctypes.c_uint32(0)) < 0:
        sys.exit("landlock.py: restrict_self: %s" % os.strerror(ctypes.get_errno()))
    os.execvp(cmd[0], cmd)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
