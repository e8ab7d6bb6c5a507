#!/usr/bin/env python3
"""Makes the data sets the cuVS side-by-side benchmark runs on (numpy only; seeded).

usage: make-bench-data.py OUT_DIR [SET ...]   (default: every set)

  lowdim      1,000,000 x 128 f32: 8 latent dimensions through a random two-layer
              nonlinear map, plus noise (low intrinsic dimension: recall climbs slowly
              with n_probes)
  lowdim-f16  the same as float16
  lowdim-i8   the same scaled by 32, rounded and clipped to int8
  images      60,000 x 784 u8: 28x28 "digit" images of 10 stroke prototypes, shifted,
              thickened and noised per sample (high-dimensional 8-bit data, short lists)
  clustered   2,000,000 x 96 f32: 4,000 anisotropic Gaussian clusters of uneven size
  wide-f16    500,000 x 256 f16 of lowdim's kind (8 latent dimensions)
  wide-i8     250,000 x 512 i8 of lowdim's kind, scaled by 32 (the shapes where a
              list-major tile's candidate room decides the blocks an SM holds)

Each set is OUT_DIR/SET/base.npy and OUT_DIR/SET/queries.npy (10,000 queries from the
same distribution, not in the base). A set named NAME-qN (e.g. lowdim-q100000) is NAME's
base with N queries instead (for batches larger than 10,000).
"""
import os
import sys

import numpy as np

QUERIES = 10_000


def lowdim(rng, n, dim=128):
    a1 = rng.standard_normal((8, 64)).astype(np.float32) / np.sqrt(8)
    a2 = rng.standard_normal((64, dim)).astype(np.float32) / np.sqrt(64)
    out = np.empty((n, dim), np.float32)
    for s in range(0, n, 200_000):
        z = rng.standard_normal((min(200_000, n - s), 8)).astype(np.float32)
        out[s:s + len(z)] = np.tanh(z @ a1) @ a2 + 0.02 * rng.standard_normal((len(z), dim)).astype(np.float32)
    return out


def to_i8(a):
    return np.clip(np.rint(a * 32), -127, 127).astype(np.int8)


def images(rng, n):
    yy, xx = np.mgrid[0:28, 0:28].astype(np.float32)
    protos = []
    for _ in range(10):
        img = np.zeros((28, 28), np.float32)
        for _ in range(rng.integers(2, 5)):
            x0, y0, x1, y1 = rng.uniform(6, 22, 4)
            for t in np.linspace(0, 1, 12):
                cx, cy = x0 + t * (x1 - x0), y0 + t * (y1 - y0)
                img += np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / 2.0)
        protos.append(img / img.max())
    protos = np.stack(protos)
    out = np.empty((n, 784), np.uint8)
    for s in range(0, n, 10_000):
        m = min(10_000, n - s)
        cls = rng.integers(0, 10, m)
        dx, dy = rng.integers(-2, 3, m), rng.integers(-2, 3, m)
        gain = rng.uniform(0.7, 1.3, m).astype(np.float32)
        imgs = np.stack([np.roll(np.roll(protos[c], y, 0), x, 1) for c, x, y in zip(cls, dx, dy)])
        imgs = imgs ** rng.uniform(0.6, 1.4, (m, 1, 1)).astype(np.float32) * gain[:, None, None]
        imgs += 0.08 * rng.standard_normal(imgs.shape).astype(np.float32)
        out[s:s + m] = np.clip(imgs * 255, 0, 255).reshape(m, 784).astype(np.uint8)
    return out


def clustered(rng, n):
    k, d = 4000, 96
    centres = rng.standard_normal((k, d)).astype(np.float32) * 3
    scales = rng.uniform(0.2, 1.5, (k, d)).astype(np.float32)
    weights = rng.pareto(1.5, k) + 1
    cls = rng.choice(k, n, p=weights / weights.sum())
    out = np.empty((n, d), np.float32)
    for s in range(0, n, 250_000):
        c = cls[s:s + 250_000]
        out[s:s + len(c)] = centres[c] + scales[c] * rng.standard_normal((len(c), d)).astype(np.float32)
    return out


def write(out, name, base, queries):
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    np.save(os.path.join(d, "base.npy"), np.ascontiguousarray(base))
    np.save(os.path.join(d, "queries.npy"), np.ascontiguousarray(queries))
    print(f"{name}: base {base.shape} {base.dtype}, queries {queries.shape}", flush=True)


def main():
    out = sys.argv[1]
    wanted = sys.argv[2:] or ["lowdim", "lowdim-f16", "lowdim-i8", "images", "clustered"]
    # (set, query count) -> the directory name it was asked for under.
    asked = {}
    for tag in wanted:
        name, n = tag, QUERIES
        if "-q" in tag and tag.rsplit("-q", 1)[1].isdigit():
            name, n = tag.rsplit("-q", 1)[0], int(tag.rsplit("-q", 1)[1])
        asked.setdefault(n, []).append((name, tag))
    for n, sets in sorted(asked.items()):
        names = {name: tag for name, tag in sets}
        rng = np.random.default_rng(20261130)
        if any(s.startswith("lowdim") for s in names):
            both = lowdim(rng, 1_000_000 + n)
            base, queries = both[:1_000_000], both[1_000_000:]
            if "lowdim" in names:
                write(out, names["lowdim"], base, queries)
            if "lowdim-f16" in names:
                write(out, names["lowdim-f16"], base.astype(np.float16), queries.astype(np.float16))
            if "lowdim-i8" in names:
                write(out, names["lowdim-i8"], to_i8(base), to_i8(queries))
        if "images" in names:
            both = images(rng, 60_000 + n)
            write(out, names["images"], both[:60_000], both[60_000:])
        if "clustered" in names:
            both = clustered(rng, 2_000_000 + n)
            write(out, names["clustered"], both[:2_000_000], both[2_000_000:])
        if "wide-f16" in names:
            # Their own generators: the same data whichever sets are asked with them.
            both = lowdim(np.random.default_rng([20261130, 256]), 500_000 + n, 256)
            write(out, names["wide-f16"], both[:500_000].astype(np.float16), both[500_000:].astype(np.float16))
        if "wide-i8" in names:
            both = to_i8(lowdim(np.random.default_rng([20261130, 512]), 250_000 + n, 512))
            write(out, names["wide-i8"], both[:250_000], both[250_000:])


if __name__ == "__main__":
    main()
