"""Generate the audit benchmark's data (BENCHMARKS.md, "Audit").

usage: python3 benches/audit_gen.py DIR [MIB]

Writes, under DIR:
  home/.agents/env                 20 sensitive values (API-key-like, 20-64 bytes)
  values.txt                       the same 20 raw values, one per line (grep -F -f)
  home/.claude/projects/-p-N/*.jsonl   Claude Code-shaped transcripts, MIB MiB in all
                                   (default 1024), in files of 16 MiB: user and
                                   assistant turns, tool_use / tool_result pairs
                                   with command output, some base64 blobs
  planted.txt                      how many lines hold a planted value, per form

About one line in 2000 carries a value, in one of: raw, base64 at offset 0/1/2,
hex, percent-encoding, json.dumps escape. Deterministic (seeded).
"""

import base64
import json
import os
import random
import sys
import urllib.parse

rng = random.Random(2026)
ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def token(n, extra=""):
    return "".join(rng.choice(ALNUM + extra) for _ in range(n))


WORDS = (
    "the a to of and in is for on that with as this it be are by from at or an was "
    "build test cargo error warning file line function return value module import "
    "json config path user project session tool result output command status exit "
    "src lib main mod fn let mut struct impl trait pub use crate self super match"
).split()


def prose(n):
    return " ".join(rng.choice(WORDS) for _ in range(n))


def main():
    out = sys.argv[1]
    mib = int(sys.argv[2]) if len(sys.argv) > 2 else 1024
    home = os.path.join(out, "home")
    os.makedirs(os.path.join(home, ".agents"), exist_ok=True)
    names = ["SECRET_%02d" % i for i in range(20)]
    values = []
    for i in range(20):
        prefix = rng.choice(["ghp_", "sk-live-", "xoxb-", "AKIA", "glpat-", ""])
        extra = "" if i % 3 else "-_/+="
        values.append(prefix + token(rng.randint(20, 56), extra))
    with open(os.path.join(home, ".agents", "env"), "w") as f:
        for n, v in zip(names, values):
            f.write("%s='%s'\n" % (n, v))
    with open(os.path.join(out, "values.txt"), "w") as f:
        for v in values:
            f.write(v + "\n")

    def form(v, kind):
        b = v.encode()
        if kind == "raw":
            return v
        if kind.startswith("base64"):
            off = int(kind[-1])
            return base64.b64encode(b"xy"[:off] + b + b"z").decode()
        if kind == "hex":
            return b.hex()
        if kind == "percent":
            return urllib.parse.quote(v, safe="")
        if kind == "json":
            return json.dumps(v)[1:-1]
        raise ValueError(kind)

    kinds = ["raw", "base64-0", "base64-1", "base64-2", "hex", "percent", "json"]
    planted = {k: 0 for k in kinds}

    # A pool of ordinary lines, reused with fresh ids.
    def tool_output():
        kind = rng.random()
        if kind < 0.5:
            return "\n".join(
                "%s:%d: %s" % (rng.choice(["src/a.rs", "src/b/c.rs", "tests/t.rs"]), rng.randint(1, 900), prose(12))
                for _ in range(rng.randint(3, 40))
            )
        if kind < 0.8:
            return "\n".join(prose(rng.randint(5, 20)) for _ in range(rng.randint(5, 60)))
        if kind < 0.99:
            return json.dumps({"files": [token(12) + ".rs" for _ in range(30)], "ok": True})
        return base64.b64encode(os.urandom(rng.randint(15_000, 60_000))).decode()

    pool = []
    for i in range(3000):
        if i % 2 == 0:
            line = {
                "type": "assistant",
                "message": {
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": prose(rng.randint(10, 80))},
                        {"type": "tool_use", "id": "toolu_ID", "name": "Bash", "input": {"command": "cargo test " + token(6)}},
                    ],
                },
                "uuid": "UUID",
            }
        else:
            text = tool_output()
            line = {
                "type": "user",
                "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_ID", "content": text}]},
                "uuid": "UUID",
                "toolUseResult": {"stdout": text, "stderr": "", "interrupted": False},
            }
        pool.append(json.dumps(line))

    target = mib << 20
    per_file = 16 << 20
    written = 0
    fileno = 0
    n_lines = 0
    while written < target:
        d = os.path.join(home, ".claude", "projects", "-p-%d" % (fileno // 8))
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "%08x-session.jsonl" % fileno)
        size = 0
        chunks = []
        while size < per_file and written + size < target:
            n_lines += 1
            if n_lines % 2000 == 0:
                k = rng.choice(kinds)
                v = rng.choice(values)
                planted[k] += 1
                line = json.dumps({"type": "user", "message": {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_%d" % n_lines,
                     "content": "printenv output: %s (%s)" % (form(v, k), prose(4))}]}})
                # json.dumps escapes the planted text once more; for the
                # forms free of '"' and '\\' the bytes are the form.
            else:
                line = pool[rng.randrange(len(pool))].replace("UUID", "%x" % n_lines, 1)
            chunks.append(line)
            size += len(line) + 1
        with open(path, "w") as f:
            f.write("\n".join(chunks))
            f.write("\n")
        written += size
        fileno += 1
    with open(os.path.join(out, "planted.txt"), "w") as f:
        for k in kinds:
            f.write("%s %d\n" % (k, planted[k]))
    print("wrote %d MiB in %d files, %d lines" % (written >> 20, fileno, n_lines))


if __name__ == "__main__":
    main()
