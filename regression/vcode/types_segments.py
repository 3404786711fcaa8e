# Generates types_segments.{vcode,expected} beside this file: an independent Python model
# of spec/vcode.md section 7 gives the expected output. Run: python3 types_segments.py
import os
HERE = os.path.dirname(os.path.abspath(__file__))
INT_MAX_ID, INT_MIN_ID = -2147483648, 2147483647
FMAX = -9.99999961690316e+35
def ident(op, t):
    return {('+','INT'):0,('+','FLOAT'):0.0,('*','INT'):1,('*','FLOAT'):1.0,
            ('MAX','INT'):INT_MAX_ID,('MAX','FLOAT'):FMAX,('MIN','INT'):INT_MIN_ID,('MIN','FLOAT'):-FMAX,
            ('AND','BOOL'):True,('OR','BOOL'):False,('XOR','BOOL'):False}[(op,t)]
def comb(op, a, b):
    return {'+':lambda:a+b,'*':lambda:a*b,'MAX':lambda:max(a,b),'MIN':lambda:min(a,b),
            'AND':lambda:a and b,'OR':lambda:a or b,'XOR':lambda:a != b}[op]()
def starts(lens):
    s, o = [], 0
    for l in lens: s.append(o); o += l
    return s
def segs(v, lens):
    return [v[st:st+l] for st, l in zip(starts(lens), lens)]
def scan(op, t, v, lens):
    out = []
    for seg in segs(v, lens):
        if seg:
            out.append(ident(op,t)); acc = seg[0]
            for x in seg[1:]: out.append(acc); acc = comb(op, acc, x)
    return out
def reduce(op, t, v, lens):
    out = []
    for seg in segs(v, lens):
        if not seg: out.append(ident(op,t)); continue
        acc = seg[0]
        for x in seg[1:]: acc = comb(op, acc, x)
        out.append(acc)
    return out
def zero(t): return {'INT':0,'FLOAT':0.0,'BOOL':False}[t]
def permute(t, v, i, lens):
    r = [zero(t)]*len(v)
    for st, l in zip(starts(lens), lens):
        for j in range(st, st+l): r[st+i[j]] = v[j]
    return r
def dist(x, lens): return [x[k] for k, l in enumerate(lens) for _ in range(l)]
def pack(v, f, lens):
    return [x for x, b in zip(v, f) if b], [sum(1 for b in seg if b) for seg in segs(f, lens)]
def rank(up, v, lens):
    r = [0]*len(v)
    for st, l in zip(starts(lens), lens):
        order = sorted(range(l), key=lambda p: v[st+p], reverse=not up) if up else sorted(range(l), key=lambda p: -v[st+p])
        for k, p in enumerate(order): r[st+p] = k
    return r
def bpermute(v, i, ss, sd):
    r = []
    for (sst, sl), (dst, dl) in zip(zip(starts(ss), ss), zip(starts(sd), sd)):
        for k in range(dst, dst+dl): r.append(v[sst+i[k]])
    return r
def extract(v, i, lens): return [v[st+i[k]] for k, st in enumerate(starts(lens))]
def replace(v, i, x, lens):
    r = list(v)
    for k, st in enumerate(starts(lens)): r[st+i[k]] = x[k]
    return r

def lit(t, x):
    if t == 'INT': return str(x)
    if t == 'FLOAT': return repr(float(x)) if '.' in repr(float(x)) else repr(float(x))
    return 'T' if x else 'F'
def const(t, v): return f"CONST {t} ({' '.join(lit(t,x) for x in v)})"
def segc(lens): return f"CONST SEGDES ({' '.join(map(str,lens))})"
def show(t, v):
    if t == 'SEG': return '[ ' + ''.join(f'{x} ' for x in v) + ']'
    f = {'INT':lambda x:'%d'%x,'FLOAT':lambda x:'%.14e'%x,'BOOL':lambda x:'T' if x else 'F'}[t]
    return '( ' + ''.join(f(x)+' ' for x in v) + ')'

DATA = {'INT': [5, -3, 8, 1, 7, 2], 'FLOAT': [0.5, -1.25, 3.0, 2.5, -4.0, 1.5], 'BOOL': [True, False, True, True, False, True]}
SHAPES = [[], [3], [2, 0, 4]]          # m=0, m=1, m>1 with an empty segment
NOEMPTY = [[], [3], [2, 1, 3]]         # EXTRACT/REPLACE: every segment is indexed
OPS = {'INT': ['+', 'MAX', 'MIN'], 'FLOAT': ['MIN', '*', '+'], 'BOOL': ['OR', 'XOR', 'AND']}
code, out = [], []
def case(comment, lines, results):
    code.append('{ ' + comment + ' }'); code.extend(lines); out.extend(results)
for t in ['INT', 'FLOAT', 'BOOL']:
    for k, lens in enumerate(SHAPES):
        n = sum(lens); v = DATA[t][:n]; op = OPS[t][k]
        case(f'{op}_SCAN and {op}_REDUCE {t} over {lens}', [const(t, v), segc(lens), f'{op}_SCAN {t}', const(t, v), segc(lens), f'{op}_REDUCE {t}'],
             [show(t, scan(op, t, v, lens)), show(t, reduce(op, t, v, lens))])
        idx = [p for l in lens for p in reversed(range(l))]
        case(f'PERMUTE {t} (reverse each segment) over {lens}', [const(t, v), const('INT', idx), segc(lens), f'PERMUTE {t}'], [show(t, permute(t, v, idx, lens))])
        x = DATA[t][::-1][:len(lens)]
        case(f'DIST {t} over {lens}', [const(t, x), segc(lens), f'DIST {t}'], [show(t, dist(x, lens))])
        f = [(j % 3) != 1 for j in range(n)]
        pv, pl = pack(v, f, lens)
        case(f'PACK {t} over {lens}', [const(t, v), const('BOOL', f), segc(lens), f'PACK {t}'], [show(t, pv), show('SEG', pl)])
        if t != 'BOOL':
            up = k != 1
            rv = DATA[t][:n] if k != 2 else [DATA[t][0], DATA[t][1], DATA[t][2], DATA[t][2], DATA[t][3], DATA[t][2]][:n]
            case(f'RANK_{"UP" if up else "DOWN"} {t} over {lens} (ties keep their order)', [const(t, rv), segc(lens), f'RANK_{"UP" if up else "DOWN"} {t}'], [show('INT', rank(up, rv, lens))])
        dl = [0 if l == 0 else (l - 1 if q % 2 == 0 else l + 2) for q, l in enumerate(lens)]
        bi = [(3 * q + 1) % lens[s] for s, l in enumerate(dl) for q in range(l)]
        case(f'BPERMUTE {t} from {lens} to {dl}', [const(t, v), const('INT', bi), segc(lens), segc(dl), f'BPERMUTE {t}'], [show(t, bpermute(v, bi, lens, dl))])
        nl = NOEMPTY[k]; nn = sum(nl); nv = DATA[t][:nn]
        ei = [(l - 1) for l in nl]
        case(f'EXTRACT {t} over {nl}', [const(t, nv), const('INT', ei), segc(nl), f'EXTRACT {t}'], [show(t, extract(nv, ei, nl))])
        ri = [l // 2 for l in nl]; rx = DATA[t][::-1][:len(nl)]
        case(f'REPLACE {t} over {nl}', [const(t, nv), const('INT', ri), const(t, rx), segc(nl), f'REPLACE {t}'], [show(t, replace(nv, ri, rx, nl))])
def cyc(t, n, off=0): return [DATA[t][(off + j) % len(DATA[t])] for j in range(n)]
def scatter(v, i, f, r, ss, sd):
    r = list(r)
    for (sst, sl), dst in zip(zip(starts(ss), ss), starts(sd)):
        for j in range(sst, sst + sl):
            if f is None or f[j]: r[dst + i[j]] = v[j]
    return r
for t in ['INT', 'FLOAT', 'BOOL']:
    for k, lens in enumerate(SHAPES):
        n = sum(lens); v = cyc(t, n)
        sd = [l + 1 for l in lens]                       # one more place per segment
        nd = sum(sd)
        i = [(2 * q + 1) % (l + 1) for l in lens for q in range(l)]
        f = [(j % 3) != 2 for j in range(n)]
        d = cyc(t, nd, 3)
        src = [const(t, v), const('INT', i)]
        case(f'DPERMUTE {t} from {lens} into {sd}', src + [const(t, d), segc(lens), segc(sd), f'DPERMUTE {t}'],
             [show(t, scatter(v, i, None, d, lens, sd))])
        case(f'FPERMUTE {t} from {lens} into {sd}', src + [const('BOOL', f), segc(lens), segc(sd), f'FPERMUTE {t}'],
             [show(t, scatter(v, i, f, [zero(t)] * nd, lens, sd))])
        case(f'DFPERMUTE {t} from {lens} into {sd}', src + [const('BOOL', f), const(t, d), segc(lens), segc(sd), f'DFPERMUTE {t}'],
             [show(t, scatter(v, i, f, d, lens, sd))])
        # BFPERMUTE: destinations lens+1 where the source has elements, none where it is empty.
        gd = [l + 1 if l else 0 for l in lens]
        gi = [(3 * q + 2) % l for l in lens for q in range(l + 1 if l else 0)]
        gf = [(q % 2) == 0 for q in range(sum(gd))]
        r = []
        for (sst, sl), (dst, dl) in zip(zip(starts(lens), lens), zip(starts(gd), gd)):
            for q in range(dst, dst + dl): r.append(v[sst + gi[q]] if gf[q] else zero(t))
        case(f'BFPERMUTE {t} from {lens} to {gd}', [const(t, v), const('INT', gi), const('BOOL', gf), segc(lens), segc(gd), f'BFPERMUTE {t}'],
             [show(t, r)])
for k, lens in enumerate(SHAPES):
    b = [10 * (q + 1) for q in range(len(lens))]; st = [q - 1 for q in range(len(lens))]
    case(f'INDEX over {lens}', [const('INT', b), const('INT', st), segc(lens), 'INDEX'],
         [show('INT', [b[q] + j * st[q] for q, l in enumerate(lens) for j in range(l)])])
hdr = ['{ every segmented operation at every element type it accepts, over zero segments, one',
       '  segment, and several segments one of which is empty (EXTRACT and REPLACE: several',
       '  non-empty). Expected output from an independent model of spec/vcode.md section 7',
       '  (types_segments.py, not taken from our interpreter). }', 'FUNC MAIN']
open(os.path.join(HERE, 'types_segments.vcode'), 'w').write('\n'.join(hdr + code + ['RET']) + '\n')
open(os.path.join(HERE, 'types_segments.expected'), 'w').write('\n'.join(out) + '\n')
