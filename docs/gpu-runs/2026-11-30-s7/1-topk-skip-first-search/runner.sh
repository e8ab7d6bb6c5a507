#!/usr/bin/env bash
# Session 7, call 1: list-major A/B (main before this session vs now: top-k pass slot
# skipping), first search with an empty cache (link timeline), k-means stages, then every
# IVF GPU test (CPU reference) on the new code.
set -u
SECONDS=0
o=$OUT; d=/tmp/bench-data; w=/tmp/r1; mkdir -p $w
python3 gpu-run/make-bench-data.py $d lowdim lowdim-i8 images > $w/data.txt 2>&1
echo "data at $SECONDS s" >> $w/times.txt
for bin in ltokit-old ltokit; do
  B="gpu-run/bin/$bin ivf bench --k 10 --json --reps 3 --cache-dir /tmp/c-$bin"
  timeout 60 $B --lists 1024 --base $d/lowdim/base.npy --queries $d/lowdim/queries.npy --probes 10,20 --batch 10000 --scan list-major > $w/lm-lowdim-$bin.json 2> $w/lm-lowdim-$bin.err
  timeout 60 $B --lists 1024 --base $d/lowdim-i8/base.npy --queries $d/lowdim-i8/queries.npy --probes 10,20 --batch 10000 --scan list-major > $w/lm-lowdim-i8-$bin.json 2> $w/lm-lowdim-i8-$bin.err
  timeout 60 $B --lists 256 --base $d/images/base.npy --queries $d/images/queries.npy --probes 5,10 --batch 10000 --scan list-major > $w/lm-images-$bin.json 2> $w/lm-images-$bin.err
  echo "A/B $bin at $SECONDS s" >> $w/times.txt
done
# First search, empty cache but for the build's plans, with the link timeline.
gpu-run/bin/ltokit bundle inspect gpu-run/ivf.ltkb | grep -o 'plan [^ ]*' | cut -d' ' -f2 \
  | grep -E '^(kmeans_[a-z]+|coarse_scores_[a-z0-9]+|coarse_c1_[a-z0-9]+|coarse_select_c1)$' > $w/build-plans.txt
for set in lowdim:1024:5 images:256:2; do
  IFS=: read -r name lists probes <<< "$set"
  c=/tmp/cold-$name; rm -rf $c
  gpu-run/bin/ltokit warmup --bundle gpu-run/ivf.ltkb --arch native --plans $w/build-plans.txt --cache-dir $c > $w/warm-$name.json 2>&1
  LTOKIT_LOG=ltokit=debug,ltokit_ivf=debug timeout 60 gpu-run/bin/ltokit ivf bench --k 10 --json --reps 3 --cache-dir $c --lists $lists \
    --base $d/$name/base.npy --queries $d/$name/queries.npy --probes $probes --batch 10000 --scan auto > $w/first-$name.json 2> $w/first-$name.err
done
echo "first search at $SECONDS s" >> $w/times.txt
timeout $((575 - SECONDS)) bash scripts/gpu-validate.sh $w/validate > $w/validate.log 2>&1
echo "validate at $SECONDS s" >> $w/times.txt
cd $w && tar czf $o/r1.tgz . && cd - > /dev/null
for f in $w/lm-*.json $w/first-*.json; do echo "$(basename $f)"; python3 -c "
import json
j=json.load(open('$f'))
print(' build', round(j['build_s'],3), j['build_breakdown_s'], 'first', round(j['first_search_ms'],1))
for r in j['results']: print(' ',r['batch'],r['scan'],r.get('list_major_tile'),r['n_probes'],round(r['recall'],4),int(r['device_qps']),round(r.get('device_call_ms',0),3), {k:round(v*1e3,3) for k,v in r['stages'].items()})
" 2>&1 | tail -4; done
grep -h "linked\|k-means" $w/first-*.err | cut -c1-220 | head -30
cat $w/validate.log | cut -c1-250
cat $w/times.txt
