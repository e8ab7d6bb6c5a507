#!/usr/bin/env bash
# Session 7, call 4: mask epilogue and 8x8 score-matrix tiles (A/B against the previous
# build, same call), link concurrency, first search with the upload's background links,
# every IVF GPU test.
set -u
SECONDS=0
o=$OUT; d=/tmp/bench-data; w=/tmp/r4; mkdir -p $w
python3 gpu-run/make-bench-data.py $d lowdim lowdim-i8 lowdim-f16 images > $w/data.txt 2>&1
echo "data at $SECONDS s" >> $w/times.txt
# The first process on this machine to link: an empty cache, the build links its own plans.
LTOKIT_LOG=ltokit=debug,ltokit_ivf=debug timeout 60 gpu-run/bin/ltokit ivf bench --k 10 --json --reps 3 --cache-dir /tmp/cold0 --lists 1024 \
  --base $d/lowdim/base.npy --queries $d/lowdim/queries.npy --probes 5 --batch 10000 --scan auto > $w/first-fresh-lowdim.json 2> $w/first-fresh-lowdim.err
echo "fresh first search at $SECONDS s" >> $w/times.txt
for set in lowdim:1024:10,20 lowdim-i8:1024:10,20 lowdim-f16:1024:10,20 images:256:5,10; do
  IFS=: read -r name lists probes <<< "$set"
  for bin in ltokit-prev ltokit; do
    timeout 60 gpu-run/bin/$bin ivf bench --k 10 --json --reps 3 --cache-dir /tmp/c-$bin --lists $lists --base $d/$name/base.npy --queries $d/$name/queries.npy --probes $probes --batch 10000 --scan list-major > $w/lm-$name-$bin.json 2> $w/lm-$name-$bin.err
  done
done
echo "A/B at $SECONDS s" >> $w/times.txt
gpu-run/bin/ltokit bundle inspect gpu-run/ivf.ltkb | grep -o 'plan [^ ]*' | cut -d' ' -f2 \
  | grep -E '^(kmeans_[a-z]+|coarse_scores_[a-z0-9]+|coarse_c1_[a-z0-9]+|coarse_select_c1)$' > $w/build-plans.txt
for set in lowdim:1024:5 lowdim-i8:1024:10 images:256:2; do
  IFS=: read -r name lists probes <<< "$set"
  c=/tmp/cold-$name; rm -rf $c
  gpu-run/bin/ltokit warmup --bundle gpu-run/ivf.ltkb --arch native --plans $w/build-plans.txt --cache-dir $c > $w/warm-$name.json 2>&1
  LTOKIT_LOG=ltokit=debug,ltokit_ivf=debug timeout 60 gpu-run/bin/ltokit ivf bench --k 10 --json --reps 3 --cache-dir $c --lists $lists \
    --base $d/$name/base.npy --queries $d/$name/queries.npy --probes $probes --batch 10000 --scan auto > $w/first-$name.json 2> $w/first-$name.err
done
echo "first search at $SECONDS s" >> $w/times.txt
timeout $((580 - SECONDS)) bash scripts/gpu-validate.sh $w/validate > $w/validate.log 2>&1
echo "validate at $SECONDS s" >> $w/times.txt
cd $w && tar czf $o/r4.tgz . && cd - > /dev/null
for f in $w/lm-*.json $w/first-*.json; do echo "$(basename $f)"; python3 -c "
import json
j=json.load(open('$f'))
print(' build', round(j['build_s'],3), 'first', round(j['first_search_ms'],1))
for r in j['results']: print(' ',r['batch'],r['scan'],r.get('list_major_tile'),r['n_probes'],round(r['recall'],4),int(r['device_qps']),round(r.get('device_call_ms',0),3), {k:round(v*1e3,3) for k,v in r['stages'].items() if k!='batches'})
" 2>&1 | tail -3; done
sed 's/\x1b\[[0-9;]*m//g' $w/first-*.err | grep -E "linked|opening" | sed -E 's/ key=Some\([^)]*\)\)//' | cut -c12-150
cat $w/validate.log | cut -c1-250
cat $w/times.txt
