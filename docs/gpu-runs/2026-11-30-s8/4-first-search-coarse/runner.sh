#!/usr/bin/env bash
# Session 8, call 4: first search from empty caches with the likely-first kernels linked
# a few at a time in the background (ltokit) vs one at a time (ltokit-prev), alternated;
# then the GPU's own times of each kernel of a 10,000-query search (coarse scores vs
# selection) on lowdim and images.
set -u
SECONDS=0
o=$OUT; d=/tmp/bench-data; w=/tmp/w; mkdir -p $w
export PATH=$PATH:/usr/local/cuda/bin
python3 gpu-run/make-bench-data.py $d lowdim images lowdim-i8 > $w/data.txt 2>&1
echo "data at $SECONDS s; cores $(nproc)" >> $w/times.txt
source gpu-run/cold-cache.sh
for round in 1 2; do
  for set in images:256:10 lowdim:1024:10 lowdim-i8:1024:10; do
    IFS=: read -r name lists probes <<< "$set"
    for bin in ltokit-prev ltokit; do
      c=/tmp/first-$name-$bin; cold_cache $c
      LTOKIT_LOG=ltokit=debug,ltokit_ivf=debug timeout 60 gpu-run/bin/$bin ivf bench --k 10 --json --reps 1 --cache-dir $c --lists $lists \
        --base $d/$name/base.npy --queries $d/$name/queries.npy --probes $probes --batch 10000 --scan auto > $w/first-$name-$bin-$round.json 2> $w/first-$name-$bin-$round.err
      unset CUDA_CACHE_PATH
    done
  done
done
echo "first searches at $SECONDS s" >> $w/times.txt
export CUDA_CACHE_PATH=/tmp/nvc
for s in lowdim:1024 images:256 lowdim-i8:1024; do
  IFS=: read -r name lists <<< "$s"
  timeout 90 ncu --cache-control none --clock-control none --metrics gpu__time_duration.sum -k regex:"ivf_(coarse|lmscan|group|merge)" --csv gpu-run/bin/ltokit ivf bench --lists $lists --k 10 --cache-dir /tmp/cb --base $d/$name/base.npy --queries $d/$name/queries.npy --probes 10 --batch 10000 --reps 1 --scan list-major > $w/ncu-$name.csv 2> $w/ncu-$name.err
done
echo "ncu at $SECONDS s" >> $w/times.txt
rm -rf /tmp/bench-data
cd $w && tar czf $o/w.tgz . && cd - > /dev/null
for f in $w/first-*.json; do python3 -c "
import json
j=json.load(open('$f'))
print('$(basename $f)', 'build', round(j['build_s'],3), 'first', round(j['first_search_ms'],1), 'ms')"; done
python3 - <<'PY'
import csv, collections
for s in ['lowdim','images','lowdim-i8']:
    try: rows = list(csv.reader(l for l in open('/tmp/w/ncu-%s.csv' % s) if l.startswith('"')))
    except Exception as e: print(s, e); continue
    h = rows[0]; ki = h.index('Kernel Name'); vi = h.index('Metric Value'); gi = h.index('Grid Size')
    agg = collections.OrderedDict()
    for r in rows[1:]:
        agg.setdefault((r[ki].split('(')[0], r[gi]), []).append(float(r[vi].replace(',', '')))
    print('==', s)
    for (n, g), v in agg.items():
        v.sort(); print(' ', n, g, len(v), 'median us', round(v[len(v)//2]/1e3, 1))
PY
cat $w/times.txt
