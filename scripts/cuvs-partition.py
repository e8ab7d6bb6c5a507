# What cuVS's IVF-Flat partition leaves each query to scan, for comparison with ltokit's
# `rows_per_query` (ltokit ivf bench --json): builds a cuVS index with the side-by-side
# settings (squared L2), assigns every base row to its nearest centre (as cuVS's build
# does) and sums, per query, the sizes of the n_probes lists it probes.
# usage: python3 cuvs-partition.py DATA_DIR N_LISTS PROBES(comma)   (cuVS and cupy on the path)
import json
import os
import sys

import cupy as cp
import numpy as np
from cuvs.neighbors import ivf_flat

data, n_lists = sys.argv[1], int(sys.argv[2])
probes = [int(p) for p in sys.argv[3].split(",")]
base = cp.asarray(np.load(os.path.join(data, "base.npy")), dtype=cp.float32)
queries = cp.asarray(np.load(os.path.join(data, "queries.npy")), dtype=cp.float32)
index = ivf_flat.build(ivf_flat.IndexParams(n_lists=n_lists, metric="sqeuclidean"), base)
if not hasattr(index, "centers"):
    print("RESULT", json.dumps({"error": "the index has no centers", "attributes": dir(index)}))
    sys.exit(1)
centers = cp.asarray(index.centers, dtype=cp.float32)
norms = (centers * centers).sum(1)
labels = cp.empty(base.shape[0], dtype=cp.int64)
for s in range(0, base.shape[0], 200_000):
    x = base[s:s + 200_000]
    labels[s:s + x.shape[0]] = cp.argmin(norms[None, :] - 2 * x @ centers.T, axis=1)
sizes = cp.bincount(labels, minlength=centers.shape[0])
order = cp.argsort(norms[None, :] - 2 * queries @ centers.T, axis=1)
out = {
    "set": os.path.basename(data.rstrip("/")), "lists": int(centers.shape[0]),
    "mean_list": float(sizes.mean()), "max_list": int(sizes.max()),
    "min_list": int(sizes.min()),
    "rows_per_query": {p: float(sizes[order[:, :p]].sum(1).mean()) for p in probes},
}
print("RESULT", json.dumps(out))
