"""The list-major scan's product work with and without 48-slot tiles (session 43, ts48.patch).

Counts each list's (query, probe) pairs from keeps-sim.py's lists and probes, cuts them into
tiles of 64 pairs, and sums the slots multiplied a step over every tile-step: a tile of n
pairs runs as 16, 32 or 64 slots (main: tile-by-slots) or as 16, 32, 48 or 64 (ts48). It
prints both sums and session 39's instruction model of them (a tile-step 8 warps of about
60 fixed instructions and 110 × its products' share), and the pairs a list.

usage: PYTHONPATH=<numpy> python3 docs/wip/tile-slots.py DATA_DIR/SET N_LISTS N_PROBES QUERIES
         e.g. DATA/lowdim-i8 1024 10 10000
"""
import importlib.util
import os
import sys

import numpy as np

_spec = importlib.util.spec_from_file_location("ks", os.path.join(os.path.dirname(os.path.abspath(__file__)), "keeps-sim.py"))
ks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ks)

data, n_lists, n_probes, nq = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
s = ks.Setup(data, n_lists, n_probes, nq)
pairs = np.bincount(s.probes.ravel(), minlength=n_lists)
steps = np.array([(len(s.nf[l]) + 63) // 64 for l in range(n_lists)])


def slots(n, shapes):
    """The slots a tile of n pairs is multiplied as: the smallest shape that holds them."""
    return next(x for x in shapes if n <= x)


for name, shapes in (("main", (16, 32, 64)), ("ts48", (16, 32, 48, 64))):
    slot_steps = tile_steps = tiles = 0
    for l in range(n_lists):
        left = pairs[l]
        while left > 0:
            t = min(64, left)
            left -= t
            tiles += 1
            slot_steps += slots(t, shapes) * steps[l]
            tile_steps += steps[l]
    model = (tile_steps * 8 * 60 + slot_steps / 64 * 8 * 110) / 1e6
    print(f"{name}: {tiles} tiles, {slot_steps} slot-steps, {tile_steps} tile-steps, ~{model:.1f} M warp instructions")
print("pairs a list, 10/25/50/75/90th percentiles:", np.percentile(pairs, [10, 25, 50, 75, 90]))
