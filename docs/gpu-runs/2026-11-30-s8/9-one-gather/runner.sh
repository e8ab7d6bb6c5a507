#!/usr/bin/env bash
# Session 8, call 9: one row gather for k-means (train_rows_f32 for mesoclusters too,
# kmeans_gather removed): the GPU tests that build indexes, and one lowdim build.
set -u
SECONDS=0
o=$OUT; w=/tmp/w; mkdir -p $w
( timeout 150 gpu-run/bin/test-ltokit-ivf-gpu-test --ignored --test-threads=1 --nocapture an_index_built device_resident probing_every_list ) > $w/tests.txt 2>&1
echo "tests exit $? at $SECONDS s" >> $w/times.txt
python3 gpu-run/make-bench-data.py /tmp/d lowdim > $w/data.txt 2>&1
for r in 1 2; do timeout 60 gpu-run/bin/ltokit ivf bench --k 10 --json --reps 1 --cache-dir /tmp/cb --lists 1024 --base /tmp/d/lowdim/base.npy --queries /tmp/d/lowdim/queries.npy --probes 10 --batch 10000 > $w/b-$r.json 2> $w/b-$r.err; done
echo "bench at $SECONDS s" >> $w/times.txt
cd $w && tar czf $o/w.tgz . && cd - > /dev/null
grep -E "^test |test result|panicked" $w/tests.txt | cut -c1-200
for r in 1 2; do python3 -c "
import json
j=json.load(open('$w/b-$r.json'))
print('build', round(j['build_s'],3), {k:round(v,3) for k,v in j['build_breakdown_s'].items()}, 'recall', round(j['results'][0]['recall'],4), int(j['results'][0]['device_qps']))"; done
cat $w/times.txt
