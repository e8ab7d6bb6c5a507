#!/usr/bin/env python3
"""A model of one warp's ws_offer (kernels/warpsort.cuh), one insertion per candidate,
against offer-ranked.patch's ws_offer_ranked (every passing candidate placed by rank at
once, up to WS_RANKED = 8), lane by lane, on random offers: list lengths k 1-32, partly
empty lists (+inf), ties, bounds, lanes past k holding leftovers. Prints how many offers
gave a different list (0 expected).

usage: python3 docs/wip/offer-ranked-model.py
"""
import random
INF=float('inf')
def seq(d,ids,k,kth,bound,s,sid):
    d=d[:];ids=ids[:]
    t=min(kth,bound)
    m=[l for l in range(32) if s[l]<t]
    for src in m:
        cs,cid=s[src],sid[src]
        if cs<t:
            at=sum(1 for l in range(k) if d[l]<=cs)
            nd=d[:];ni=ids[:]
            for l in range(32):
                if l>at: nd[l]=d[l-1];ni[l]=ids[l-1]
                elif l==at: nd[l]=cs;ni[l]=cid
            d,ids=nd,ni
            kth=d[k-1]; t=min(kth,bound)
    return d[:k],ids[:k],kth
def ranked(d,ids,k,kth,bound,s,sid,R=8):
    t=min(kth,bound)
    m=[l for l in range(32) if s[l]<t]
    if not m: return d[:k],ids[:k],kth
    if len(m)>R: return seq(d,ids,k,kth,bound,s,sid)
    cnt=len(m)
    cs=[s[m[p]] if p<cnt else s[0] for p in range(R)]
    cid=[sid[m[p]] if p<cnt else sid[0] for p in range(R)]
    at=[]
    for p in range(R):
        real=p<cnt
        a=sum(1 for l in range(k) if d[l]<=cs[p]) if real else 32
        if real:
            for q in range(R):
                if q!=p and q<cnt and (cs[q]<cs[p] or (cs[q]==cs[p] and q<p)): a+=1
        at.append(a)
    nd=[0]*32;ni=[0]*32
    for lane in range(32):
        before=sum(1 for p in range(R) if at[p]<lane)
        taken=[p for p in range(R) if at[p]==lane]
        if taken: nd[lane]=cs[taken[0]];ni[lane]=cid[taken[0]]
        else:
            fr=lane-before; fr=0 if fr<0 else fr
            nd[lane]=d[fr];ni[lane]=ids[fr]
    return nd[:k],ni[:k],nd[k-1]
random.seed(1)
bad=0
for it in range(200000):
    k=random.randint(1,32)
    vals=[random.randint(0,20) for _ in range(k)]
    nfill=random.randint(0,k)
    lst=sorted(vals[:nfill])+[INF]*(k-nfill)
    d=lst+[random.choice([INF,3.0,-1.0]) for _ in range(32-k)]
    ids=list(range(100,100+k))+[-1]*(32-k)
    for j in range(nfill,k): ids[j]=-1
    kth=d[k-1]
    bound=random.choice([INF,10,5])
    s=[random.choice([INF]*3+[random.randint(0,20)]) for _ in range(32)]
    sid=list(range(32))
    a=seq(d,ids,k,kth,bound,s,sid); b=ranked(d,ids,k,kth,bound,s,sid)
    if a!=b:
        bad+=1
        if bad<3: print(k,d,s,a,b)
print("bad",bad)
