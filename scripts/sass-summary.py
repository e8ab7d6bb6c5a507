#!/usr/bin/env python3
"""Summarises an ncu SASS source page (`ncu -i REP --page source --csv --print-source sass`):
stall reasons over all samples, samples and executed instructions by opcode, and with a
count N the N hottest instructions with their two main stall reasons.

usage: scripts/sass-summary.py SASS.csv[.xz] [N]   (logs over 50 KB are kept xz-compressed)
"""
import csv, sys, collections, re, lzma
f = sys.argv[1]
rows = list(csv.reader((lzma.open if f.endswith('.xz') else open)(f, 'rt')))
h = rows[1]; data = rows[2:]
ix = {n:i for i,n in enumerate(h)}
stalls = [n for n in h if n.startswith('stall_') and 'Not Issued' not in n]
tot = collections.Counter(); samples=0; inst=0
ops = collections.Counter(); opinst=collections.Counter()
seq=[]
for r in data:
    if len(r) < len(h): continue
    src = r[ix['Source']].strip()
    op = src.split()[0] if src else '?'
    if op.startswith('@'): op = src.split()[1]
    op = op.split('.')[0]
    s = int(r[ix['# Samples']] or 0); n = int(r[ix['Instructions Executed']] or 0)
    samples += s; inst += n
    ops[op] += s; opinst[op] += n
    for st in stalls: tot[st] += int(r[ix[st]] or 0)
    seq.append((r[ix['Address']], src, s, n, {st:int(r[ix[st]] or 0) for st in stalls}))
print('samples', samples, 'warp insts', inst)
print('stalls:', [(k[6:], round(v/samples*100,1)) for k,v in tot.most_common(10)])
print('by op (samples%, inst%):')
for op, s in ops.most_common(18): print(f'  {op:10s} {s/samples*100:5.1f} {opinst[op]/inst*100:5.1f}')
# windows of 40 instructions by samples
W=int(sys.argv[2]) if len(sys.argv)>2 else 0
if W:
    top = sorted(range(len(seq)), key=lambda i: -seq[i][2])[:W]
    for i in sorted(top):
        a,src,s,n,st = seq[i]
        best = sorted(st.items(), key=lambda kv:-kv[1])[:2]
        print(f'{i:5d} {s:6d} {n:9d} {src[:60]:60s} {[(k[6:],v) for k,v in best]}')
