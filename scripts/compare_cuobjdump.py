#!/usr/bin/env python3
"""Compares `ltokit inventory --json FILE` with `cuobjdump -lelf -lptx FILE`.

Usage: compare_cuobjdump.py LTOKIT FILE. Prints both listings as (kind, arch) counts and
exits 1 when the cubin or PTX sequences differ. cuobjdump omits LTO-IR entries and prints
family targets without their `f`; both are normalised the same way here.
"""
import collections
import json
import subprocess
import sys


def cuobjdump(path):
    out = subprocess.run(["/usr/local/cuda/bin/cuobjdump", "-lelf", "-lptx", path],
                         capture_output=True, text=True).stdout
    entries = []
    for line in out.splitlines():
        if line.startswith(("ELF file", "PTX file")):
            name = line.split(": ", 1)[1].strip()
            arch = name.split(".")[-2]
            entries.append(("cubin" if line.startswith("ELF") else "ptx", arch))
    return entries


def ltokit(tool, path):
    out = subprocess.run([tool, "inventory", "--json", path], capture_output=True, text=True, check=True).stdout
    files = json.loads(out)["files"]
    return [(e["kind"], e["arch"].rstrip("f")) for e in files[0]["entries"] if e["kind"] != "ltoir"]


def main():
    tool, path = sys.argv[1], sys.argv[2]
    ours, theirs = ltokit(tool, path), cuobjdump(path)
    ok = True
    for kind in ("cubin", "ptx"):
        a = [e for e in ours if e[0] == kind]
        b = [e for e in theirs if e[0] == kind]
        same = a == b
        ok &= same
        print(f"{kind}: ltokit {len(a)} entries, cuobjdump {len(b)} entries, same sequence: {same}")
    print("per (kind, arch):   ltokit  cuobjdump")
    ca, cb = collections.Counter(ours), collections.Counter(theirs)
    for key in sorted(set(ca) | set(cb)):
        print(f"  {key[0]:<6} {key[1]:<8} {ca[key]:>7} {cb[key]:>10}")
    print("MATCH" if ok else "MISMATCH")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
