#!/usr/bin/env python3
"""Registers, spill (frame) bytes and code size of linked plans, read from their cubins.

Links each PLAN of BUNDLE for ARCH with `ltokit warmup` into a scratch cache (no GPU
needed), then reads the cubin's ELF: the code size of each `.text.<kernel>` section and,
from the `.nv.info` attributes, each function's register count (EIATTR_REGCOUNT) and frame
size (EIATTR_FRAME_SIZE: bytes of local memory a thread spills to). With --sass DIR the
cubin's SASS is written to DIR/PLAN.sass by NVDISASM (nvdisasm from the
nvidia-cuda-nvdisasm wheel, or CUDA's). One line a plan.

usage: plan-resources.py [--arch sm_90] [--sass DIR] [--nvdisasm PATH] LTOKIT BUNDLE PLAN...
"""
import argparse
import pathlib
import struct
import subprocess
import sys
import tempfile

EIATTR_FRAME_SIZE, EIATTR_REGCOUNT = 0x11, 0x2F
EIFMT_SVAL, EIFMT_HVAL, EIFMT_BVAL = 4, 3, 2


def info_attributes(data, offset, size):
    """Yields (attribute, value bytes) of an .nv.info section's sized entries."""
    at, end = offset, offset + size
    while at < end:
        fmt, attr = data[at], data[at + 1]
        at += 2
        if fmt == EIFMT_SVAL:
            (n,) = struct.unpack_from("<H", data, at)
            yield attr, data[at + 2 : at + 2 + n]
            at += 2 + n
        elif fmt == EIFMT_HVAL:
            at += 2
        elif fmt == EIFMT_BVAL:
            at += 1


def cubin_resources(data):
    """({kernel: code bytes}, {function index: {"regs": registers, "frame": spill bytes}})."""
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    entsize, count, names_index = struct.unpack_from("<HHH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * entsize) for i in range(count)]
    names_at = sections[names_index][4]

    def name(sec):
        start = names_at + sec[0]
        return data[start : data.index(b"\0", start)].decode()

    kernels, functions = {}, {}
    for sec in sections:
        n, offset, size = name(sec), sec[4], sec[5]
        if n.startswith(".text."):
            kernels[n[len(".text.") :]] = size
        elif n == ".nv.info":
            for attr, value in info_attributes(data, offset, size):
                if attr in (EIATTR_REGCOUNT, EIATTR_FRAME_SIZE) and len(value) >= 8:
                    function, v = struct.unpack_from("<II", value)
                    key = "regs" if attr == EIATTR_REGCOUNT else "frame"
                    functions.setdefault(function, {})[key] = v
    return kernels, functions


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--sass", type=pathlib.Path)
    ap.add_argument("--nvdisasm", default="nvdisasm")
    ap.add_argument("ltokit")
    ap.add_argument("bundle")
    ap.add_argument("plans", nargs="+")
    args = ap.parse_args()
    if args.sass:
        args.sass.mkdir(parents=True, exist_ok=True)
    for plan in args.plans:
        with tempfile.TemporaryDirectory() as tmp:
            tmp = pathlib.Path(tmp)
            (tmp / "plans").write_text(plan + "\n")
            link = subprocess.run(
                [args.ltokit, "warmup", "--bundle", args.bundle, "--arch", args.arch,
                 "--plans", str(tmp / "plans"), "--cache-dir", str(tmp / "cache")],
                capture_output=True, text=True)
            cubins = list((tmp / "cache").rglob("*.cubin"))
            if link.returncode != 0 or not cubins:
                sys.exit(f"{plan}: did not link: {link.stdout}{link.stderr}".strip())
            raw = cubins[0].read_bytes()
            elf = raw[raw.find(b"\x7fELF") :]  # the cache entry's header comes first
            kernels, functions = cubin_resources(elf)
            res = " ".join(f"regs {f.get('regs', '?')} frame {f.get('frame', 0)}" for _, f in sorted(functions.items()))
            code = " ".join(f"{k} code {v}" for k, v in sorted(kernels.items()))
            print(f"{plan} {res} {code}")
            if args.sass:
                (tmp / "k.cubin").write_bytes(elf)
                with open(args.sass / f"{plan}.sass", "w") as out:
                    subprocess.run([args.nvdisasm, "-c", str(tmp / "k.cubin")], stdout=out, check=True)


if __name__ == "__main__":
    main()
