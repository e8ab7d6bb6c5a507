#!/usr/bin/env bash
# Session 10, call 5: the 8-bit capped scan at four blocks an SM (64 registers, one
# cp.async step buffer; LTOKIT_TEMP_O4) against three (o3, two buffers: the mid build),
# two rounds on lowdim-i8; the list-major GPU test with the four-block kernels forced.
set -u
SECONDS=0
o=$OUT; w=/tmp/w; d=/tmp/d; mkdir -p $w
python3 gpu-run/make-bench-data.py $d lowdim-i8 > $w/data.txt 2>&1 &
( LTOKIT_TEMP_O4=1 timeout 200 gpu-run/bin/test-ltokit-ivf-gpu-test --ignored --test-threads=1 --nocapture list_major_tiles ) > $w/tests.txt 2>&1
echo "tests exit $? at $SECONDS s" >> $w/times.txt
wait
for round in 1 2; do
for bin in mid o3 o4; do
  exe=gpu-run/bin/ltokit-mid; env=""
  [ $bin = o3 ] && exe=gpu-run/bin/ltokit-o4
  [ $bin = o4 ] && { exe=gpu-run/bin/ltokit-o4; env="LTOKIT_TEMP_O4=1"; }
  B="env $env $exe ivf bench --k 10 --json --scan list-major --cache-dir /tmp/cb-$bin --reps 3"
  timeout 90 $B --lists 1024 --base $d/lowdim-i8/base.npy --queries $d/lowdim-i8/queries.npy --probes 5,10,20,50 --batch 10000,1000 > $w/i8-$bin-$round.json 2> $w/i8-$bin-$round.err
  echo "bench $bin $round at $SECONDS s" >> $w/times.txt
done; done
cd $w && tar czf $o/w.tgz . && cd - > /dev/null
grep -E "^test |test result|panicked|checked" $w/tests.txt | cut -c1-250
python3 - <<'PY'
import json, glob, collections
rows = collections.defaultdict(dict)
for f in sorted(glob.glob('/tmp/w/*-*-[12].json')):
    name = f.split('/')[-1][:-5]; s, b, r = name.rsplit('-', 2)
    try: j = json.load(open(f))
    except Exception as e: print(f, e); continue
    for x in j['results']:
        rows[(s, x['batch'], x['n_probes'])][(b, r)] = (int(x['device_qps']), round(x['recall'], 4))
for key, v in rows.items():
    print(key, '  '.join(f"{b}{r}:{val[0]/1e6:.2f}M" for (b, r), val in sorted(v.items())), ' recall', sorted(set(val[1] for val in v.values())))
PY
grep -h "lmscan" $w/i8-o4-1.err | head -2 | cut -c1-200
cat $w/times.txt
