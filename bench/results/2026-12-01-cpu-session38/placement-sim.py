# Replays a trace of the region allocator (lines "T offset len" for a block taken, "G offset len"
# for one given back; printed by an experiment build of vcode/src/region.rs) under other
# placement policies and prints the highest offset each reaches (the pages a run touches).
#   python3 placement-sim.py TRACE...
import sys, bisect
def run(trace, policy, thr):
    free = {}; top = 0; maxtop = 0; live = {}
    for op, a, b in trace:
        if op == 'T':
            orig, ln = a, b
            offs = sorted(free)
            fits = [(o, free[o]) for o in offs if free[o] >= ln]
            at = None
            if fits:
                if policy == 'cur' or ln < thr:
                    ff = fits[:64] if policy=='cur' else fits
                    o, fl = fits[0]
                    del free[o]
                    if fl > ln: free[o+ln] = fl-ln
                    at = o
                elif policy == 'high':   # highest block that fits, placed at its end
                    o, fl = fits[-1]
                    del free[o]
                    if fl > ln: free[o] = fl-ln
                    at = o + fl - ln
                elif policy == 'bestend':   # best fit, at its end
                    o, fl = min(fits, key=lambda f: (f[1], -f[0]))
                    del free[o]
                    if fl > ln: free[o] = fl-ln
                    at = o + fl - ln
                elif policy == 'best':
                    o, fl = min(fits, key=lambda f: (f[1], f[0]))
                    del free[o]
                    if fl > ln: free[o+ln] = fl-ln
                    at = o
            if at is None:
                at = top; top += ln
            maxtop = max(maxtop, top)
            live[orig] = (at, ln)
        else:
            at, ln = live.pop(a)
            o, l = at, ln
            offs = sorted(free)
            i = bisect.bisect_left(offs, o)
            if i > 0 and offs[i-1] + free[offs[i-1]] == o:
                po = offs[i-1]; l += free.pop(po); o = po
            if o + l in free:
                l += free.pop(o+l)
            if o + l == top: top = o
            else: free[o] = l
    return maxtop >> 10
for fn in sys.argv[1:]:
    tr = [(p[0], int(p[1]), int(p[2])) for p in (l.split() for l in open(fn)) if len(p)==3 and p[0] in 'TG']
    print(fn, 'cur', run(tr, 'cur', 0))
    for pol in ['high','bestend','best']:
        for thr in [64<<10, 256<<10, 1<<20, 4<<20]:
            print(fn, pol, thr>>10, run(tr, pol, thr))
