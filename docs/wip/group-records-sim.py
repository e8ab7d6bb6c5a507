"""Checks group-records-coalesced.patch's record writes on the CPU.

It simulates ivf_group_offsets_kernel (kernels/group.cu) for one block of 1,024 threads.
The old form has each thread write its own lists' tile records. The patch's form has each
warp write its lanes' lists in turn, a list's run of records spread over the lanes. On 60
random groupings (1 to 3,000 lists, one phase or two, the seed's fronts) it asserts that
both forms write the same records to the same places, and that no place is written twice.
Run: python3 docs/wip/group-records-sim.py
"""
import random
def tiles(counts,n,list_,qt_first,first_apart,qt):
    first = counts[n+list_] if qt_first>0 else 0
    ft = (first+qt_first-1)//qt_first if qt_first>0 else 0
    rf = first if first_apart else 0
    rest = counts[list_]-rf
    rt = (rest+qt-1)//qt
    return first,ft,rf,rest,rt
def run(n,counts,order,qt_first,first_apart,qt,new):
    B=1024; per=(n+B-1)//B
    cursor=[0]*(2*n)
    mine=[]
    for tid in range(B):
        begin=min(n,tid*per); end=min(n,begin+per)
        m=[0,0,0,0]
        for l in range(begin,end):
            m[0]+=counts[l]
            first,ft,rf,rest,rt=tiles(counts,n,order[l],qt_first,first_apart,qt)
            m[1]+=ft; m[2]+= rt>0; m[3]+=max(rt-1,0)
        mine.append(m)
    pre=[[0]*4]; 
    for m in mine: pre.append([pre[-1][i]+m[i] for i in range(4)])
    tot=pre[-1]
    rec={}
    state=[]
    for tid in range(B):
        begin=min(n,tid*per); end=min(n,begin+per)
        p,f,a,b=pre[tid][0],pre[tid][1],pre[tid][2],tot[2]+pre[tid][3]
        for l in range(begin,end):
            cursor[n+l]=p; cursor[l]=p+counts[n+l]; p+=counts[l]
        state.append([begin,end,f,a,b])
    grid_first = tot[1]
    if not new:
        for tid in range(B):
            begin,end,f,a,b=state[tid]
            for r in range(begin,end):
                list_=order[r]; start=cursor[n+list_]
                first,ft,rf,rest,rt=tiles(counts,n,list_,qt_first,first_apart,qt)
                for j in range(ft): rec[f]=(list_,start+j*qt_first,min(qt_first,first-j*qt_first)); f+=1
                for j in range(rt):
                    idx = a if j==0 else b
                    if j==0: a+=1
                    else: b+=1
                    rec[grid_first+idx]=(list_,start+rf+j*qt,min(qt,rest-j*qt))
    else:
        for w in range(B//32):
            for kk in range(per):
                lanes=[]
                for lane in range(32):
                    tid=w*32+lane; st=state[tid]
                    begin,end,f,a,b=st; r=begin+kk
                    t=(0,0,0,0,0); list_=0; start=0
                    if r<end:
                        list_=order[r]; start=cursor[n+list_]; t=tiles(counts,n,list_,qt_first,first_apart,qt)
                    lanes.append((list_,start,t,f,a,b))
                    st[2]+=t[1]; st[3]+= t[4]>0; st[4]+=max(t[4]-1,0)
                for (l,s,t,af,aa,ab) in lanes:
                    first,ft,rf,rest,rt=t
                    if ft+rt==0: continue
                    for j in range(ft): assert af+j not in rec; rec[af+j]=(l,s+j*qt_first,min(qt_first,first-j*qt_first))
                    for j in range(rt):
                        idx = aa if j==0 else ab+j-1
                        assert grid_first+idx not in rec
                        rec[grid_first+idx]=(l,s+rf+j*qt,min(qt,rest-j*qt))
    return rec
random.seed(1)
for trial in range(60):
    n=random.choice([1,5,37,256,1024,1500,3000])
    counts=[0]*(2*n)
    for l in range(n):
        c=random.choice([0,0,1,5,40,100,1000]) if random.random()<0.9 else random.randint(0,3000)
        fp=random.randint(0,c)
        counts[l]=c; counts[n+l]=fp
    order=list(range(n)); random.shuffle(order)
    qt_first,first_apart=random.choice([(0,0),(16,1),(32,1),(16,0)])
    qt=random.choice([16,32,64])
    a=run(n,counts,order,qt_first,first_apart,qt,False)
    b=run(n,counts,order,qt_first,first_apart,qt,True)
    assert a==b,(trial,n)
print("same records in 60 random groupings")
