#!/usr/bin/env bash
# Session 10, call 1: 8-bit list-major steps copied with cp.async (one or two step
# buffers, norms from the mma operands) — the GPU tests of the list-major tiles, then A/B
# against session 9's final build (prev) and with one buffer forced, two rounds; the
# host's link speed for the first search's plans (alone and four at once).
set -u
SECONDS=0
o=$OUT; w=/tmp/w; d=/tmp/d; mkdir -p $w
python3 gpu-run/make-bench-data.py $d lowdim-i8 images > $w/data.txt 2>&1 &
( timeout 200 gpu-run/bin/test-ltokit-ivf-gpu-test --ignored --test-threads=1 --nocapture list_major_tiles large_batches device_resident ) > $w/tests.txt 2>&1
echo "tests exit $? at $SECONDS s" >> $w/times.txt
wait
echo "data at $SECONDS s" >> $w/times.txt
for p in scan_c16_i8_vmax_l2_none scan_c16_u8_vmax_l2_none coarse_select_c16 merge_c16_l2; do
  echo $p > $w/one.txt
  gpu-run/bin/ltokit warmup --bundle gpu-run/ivf.ltkb --arch native --jobs 1 --plans $w/one.txt --cache-dir /tmp/lc-$p --json | grep -E '"seconds"' | sed "s/^/alone $p /" >> $w/links.txt
done
printf "scan_c16_u8_vmax_l2_none\nmerge_c16_l2\ncoarse_select_c8\ncoarse_select_c16\n" > $w/four.txt
gpu-run/bin/ltokit warmup --bundle gpu-run/ivf.ltkb --arch native --jobs 4 --plans $w/four.txt --cache-dir /tmp/lc-four --json | grep -E '"seconds"' | sed "s/^/four at once /" >> $w/links.txt
echo "links at $SECONDS s" >> $w/times.txt
for round in 1 2; do
for bin in prev new one; do
  exe=gpu-run/bin/ltokit; [ $bin = prev ] && exe=gpu-run/bin/ltokit-prev
  env=""; [ $bin = one ] && env="LTOKIT_TEMP_ONE_STEP_BUFFER=1"
  B="env $env $exe ivf bench --k 10 --json --scan list-major --cache-dir /tmp/cb-$bin"
  timeout 90 $B --lists 1024 --base $d/lowdim-i8/base.npy --queries $d/lowdim-i8/queries.npy --probes 10,20,50 --batch 10000,1000 --reps 3 > $w/i8-$bin-$round.json 2> $w/i8-$bin-$round.err
  timeout 90 $B --lists 256 --base $d/images/base.npy --queries $d/images/queries.npy --probes 2,5,10,20 --batch 10000,1000 --reps 3 > $w/images-$bin-$round.json 2> $w/images-$bin-$round.err
  echo "bench $bin $round at $SECONDS s" >> $w/times.txt
done; done
cd $w && tar czf $o/w.tgz . && cd - > /dev/null
grep -E "^test |test result|panicked|checked" $w/tests.txt | cut -c1-250
cat $w/links.txt
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
tail -2 $w/i8-new-1.err
cat $w/times.txt
