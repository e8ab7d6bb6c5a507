import json,glob,os,re,collections,filecmp,sys
prev={22:21,23:22}
allruns=collections.defaultdict(lambda: collections.defaultdict(list))  # key->var->list of (call,qps)
for c in (21,22,23):
    for f in glob.glob(f'dev{c}/ab/*.json'):
        b=os.path.basename(f)
        if c in prev and os.path.exists(f'dev{prev[c]}/ab/{b}') and filecmp.cmp(f,f'dev{prev[c]}/ab/{b}',shallow=False): continue
        s,v,r=re.match(r'(.+)-([a-z0-9]+)-(\d)\.json',b).groups()
        for res in json.load(open(f))['results']:
            allruns[(s,res['batch'],res['n_probes'])][v].append((c,res['device_qps']))
# paired within call: variant mean vs cand mean per call, then average over calls
for key in sorted(allruns):
    row=allruns[key]; out=[]
    for v in ['nf','nf16k','nf8k','rc','gs4k']:
        if v not in row: continue
        diffs=[]
        for c in (21,22,23):
            a=[q for cc,q in row['cand'] if cc==c]; b=[q for cc,q in row[v] if cc==c]
            if a and b: diffs.append(100*(sum(b)/len(b)/(sum(a)/len(a))-1))
        out.append(f"{v}:"+"/".join(f"{d:+.1f}" for d in diffs))
    cm=[q for _,q in row['cand']]
    print(key, f"cand {sum(cm)/len(cm)/1e6:.2f}M n={len(cm)}", ' '.join(out))
