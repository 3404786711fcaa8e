//! The inliner: works on stack code, bottom-up over the call graph.
//!
//! VCODE calls have no frames (the callee works on the caller's stack), so replacing
//! `CALL f` by the body of `f` without its `RET` is exact. Functions are visited callees
//! first (reverse topological order of the strongly connected components); a call is
//! inlined when the callee is not recursive (not in a cycle of the call graph) and either
//! its size (computational instructions, see [`size`]) is at most
//! [`INLINE_SIZE_LIMIT`], or it has exactly one call site, or it is a leaf (calls nothing)
//! of at most [`LEAF_INLINE_LIMIT`] instructions with at most [`LEAF_INLINE_SITES`] call
//! sites. Functions no longer reachable
//! from the entry are then dropped.

use crate::OptError;
use std::collections::HashMap;
use vcode::op::Exec;
use vcode::{Function, Imm, Origin, Program};

/// Largest callee (in computational instructions) inlined at every call site.
pub const INLINE_SIZE_LIMIT: usize = 24;

/// Largest leaf callee (one that calls nothing, once its own callees are inlined) inlined
/// at up to [`LEAF_INLINE_SITES`] call sites: a function of element-wise arithmetic, as
/// Black-Scholes' `cnd`, then fuses into its callers' superoperators instead of writing
/// its argument and result vectors at every call.
pub const LEAF_INLINE_LIMIT: usize = 64;

/// Most call sites of a leaf callee of over [`INLINE_SIZE_LIMIT`] instructions that is
/// still inlined (the code grows by at most this many copies of it).
pub const LEAF_INLINE_SITES: usize = 4;

/// Longest inline chain (calls inlined within calls inlined ...) an instruction may get: a
/// callee holding an instruction inlined this deep is called, not inlined. Each inlined
/// instruction keeps its whole chain of call sites, so a chain of 20,000 calls, each
/// inlined into the one before, made 200 million sites (9 GB) and took minutes.
pub const MAX_INLINE_DEPTH: usize = 64;

/// The longest inline chain among `f`'s instructions, counted up to `cap`. `memo` holds
/// the chain length of each inline site so far (extended here as sites are added), so
/// each instruction costs one look-up, not a walk of its chain.
fn inline_depth(f: &Function, sites: &[Origin], memo: &mut Vec<usize>, cap: usize) -> usize {
    let mut deepest = 0;
    for o in &f.origins {
        deepest = deepest.max(chain_len(sites, memo, o.inlined_at, cap));
        if deepest >= cap {
            break;
        }
    }
    deepest
}

/// The length of the chain of inline sites starting at site `k` (0: none), counted up to
/// `cap`. A site pointing at an earlier one has its length memoised from that one's; a
/// number out of range ends a chain, and a site pointing at itself or a later one (a
/// malformed table) is walked.
fn chain_len(sites: &[Origin], memo: &mut Vec<usize>, k: u32, cap: usize) -> usize {
    while memo.len() < sites.len() {
        let s = memo.len() + 1;
        let next = sites[s - 1].inlined_at as usize;
        let len = if next == 0 || next > sites.len() {
            1
        } else if next < s {
            memo[next - 1].saturating_add(1)
        } else {
            usize::MAX
        };
        memo.push(len);
    }
    let (mut k, mut d) = (k, 0);
    while k != 0 && d < cap {
        match memo.get(k as usize - 1) {
            Some(&len) if len != usize::MAX => return (d + len).min(cap),
            Some(_) => {
                d += 1;
                k = sites[k as usize - 1].inlined_at;
            }
            None => return (d + 1).min(cap),
        }
    }
    d
}

/// The size metric: instructions other than stack shuffles, constants and structure
/// (`COPY`, `POP`, `CPOP`, `CONST`, `IF`, `ELSE`, `ENDIF`, `RET`).
pub fn size(f: &Function) -> usize {
    f.body
        .iter()
        .filter(|i| {
            !matches!(
                i.op.info().exec,
                Exec::Copy | Exec::Pop | Exec::Cpop | Exec::Const | Exec::If | Exec::Else | Exec::EndIf | Exec::Ret
            )
        })
        .count()
}

fn callees(index: &HashMap<&str, usize>, f: &Function) -> Result<Vec<usize>, OptError> {
    let mut out = Vec::new();
    for (i, ins) in f.body.iter().enumerate() {
        if let Imm::Label(l) = &ins.imm {
            match index.get(l.as_str()) {
                Some(&k) => out.push(k),
                None => {
                    let pos = f.pos_of(i);
                    return Err(OptError::Malformed {
                        function: f.name.clone(),
                        message: format!("{}:{}: call to undefined function `{l}`", pos.line, pos.col),
                    });
                }
            }
        }
    }
    Ok(out)
}

/// Strongly connected components (Tarjan), callees before callers.
fn sccs(graph: &[Vec<usize>]) -> Vec<Vec<usize>> {
    struct T<'a> {
        g: &'a [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    // Iterative to stay safe on long call chains.
    fn visit(t: &mut T<'_>, root: usize) {
        let mut work: Vec<(usize, usize)> = vec![(root, 0)];
        t.index[root] = Some(t.next);
        t.low[root] = t.next;
        t.next += 1;
        t.stack.push(root);
        t.on[root] = true;
        while let Some(&mut (v, ref mut k)) = work.last_mut() {
            if *k < t.g[v].len() {
                let w = t.g[v][*k];
                *k += 1;
                match t.index[w] {
                    None => {
                        t.index[w] = Some(t.next);
                        t.low[w] = t.next;
                        t.next += 1;
                        t.stack.push(w);
                        t.on[w] = true;
                        work.push((w, 0));
                    }
                    Some(iw) if t.on[w] => t.low[v] = t.low[v].min(iw),
                    _ => {}
                }
            } else {
                work.pop();
                if let Some(&(u, _)) = work.last() {
                    t.low[u] = t.low[u].min(t.low[v]);
                }
                if Some(t.low[v]) == t.index[v] {
                    let mut comp = Vec::new();
                    while let Some(w) = t.stack.pop() {
                        t.on[w] = false;
                        comp.push(w);
                        if w == v {
                            break;
                        }
                    }
                    t.out.push(comp);
                }
            }
        }
    }
    let n = graph.len();
    let mut t = T {
        g: graph,
        index: vec![None; n],
        low: vec![0; n],
        on: vec![false; n],
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if t.index[v].is_none() {
            visit(&mut t, v);
        }
    }
    t.out
}

/// Inlines calls as described in the module documentation and drops unreachable
/// functions.
pub fn inline(p: &Program) -> Result<Program, OptError> {
    let n = p.functions.len();
    let index = p.function_index();
    let graph: Vec<Vec<usize>> = p.functions.iter().map(|f| callees(&index, f)).collect::<Result<_, _>>()?;
    let comps = sccs(&graph);
    let mut recursive = vec![false; n];
    for c in &comps {
        let rec = c.len() > 1 || graph[c[0]].contains(&c[0]);
        for &v in c {
            recursive[v] = rec;
        }
    }
    let reach = reachable(&graph, p.entry());
    let mut call_sites = vec![0usize; n];
    for (f, cs) in graph.iter().enumerate() {
        if reach[f] {
            for &c in cs {
                call_sites[c] += 1;
            }
        }
    }
    let mut funcs: Vec<Function> = p.functions.clone();
    let mut sites: Vec<Origin> = p.inline_sites.clone();
    let mut parts: Vec<Vec<Origin>> = p.fused_parts.clone();
    // [`inline_depth`] of each callee (final by the time a caller inlines it).
    let mut depth: HashMap<usize, usize> = HashMap::new();
    let mut chains_memo: Vec<usize> = Vec::new();
    for comp in &comps {
        for &fi in comp {
            let f = &funcs[fi];
            let mut body = Vec::with_capacity(f.body.len());
            let mut origins = Vec::with_capacity(f.body.len());
            let mut changed = false;
            // Callees with this one call site, inlined here: unreachable from now on.
            let mut used_up = Vec::new();
            for (i, ins) in f.body.iter().enumerate() {
                let target = match &ins.imm {
                    Imm::Label(l) => index.get(l.as_str()).copied(),
                    _ => None,
                };
                if let Some(g) = target {
                    let callee = &funcs[g];
                    let n = size(callee);
                    let leaf = n <= LEAF_INLINE_LIMIT
                        && call_sites[g] <= LEAF_INLINE_SITES
                        && !callee.body.iter().any(|i| matches!(i.op.info().exec, Exec::Call));
                    let small = n <= INLINE_SIZE_LIMIT || call_sites[g] == 1 || leaf;
                    if g != fi
                        && !recursive[g]
                        && small
                        && !on_the_way_out(&f.body[i + 1..])
                        && *depth.entry(g).or_insert_with(|| inline_depth(callee, &sites, &mut chains_memo, MAX_INLINE_DEPTH))
                            < MAX_INLINE_DEPTH
                    {
                        let k = callee.body.len().saturating_sub(1);
                        body.extend_from_slice(&callee.body[..k]);
                        // The callee's instructions keep their own positions (in the
                        // callee's source) and record the call they were inlined at.
                        let site = new_site(&mut sites, f.origin_of(i));
                        let mut chains = HashMap::new();
                        for j in 0..k {
                            let o = callee.origin_of(j);
                            let mut o = Origin { inlined_at: rebase(&mut sites, &mut chains, o.inlined_at, site), ..o };
                            // A `FUSED` instruction of the callee: its parts were inlined
                            // at the same call (a copy of their list, rebased the same way).
                            if let Some(list) = (o.parts as usize).checked_sub(1).and_then(|i| parts.get(i)).cloned() {
                                let list = list
                                    .into_iter()
                                    .map(|q| Origin { inlined_at: rebase(&mut sites, &mut chains, q.inlined_at, site), ..q })
                                    .collect();
                                parts.push(list);
                                o.parts = parts.len() as u32;
                            }
                            origins.push(o);
                        }
                        changed = true;
                        if call_sites[g] == 1 {
                            used_up.push(g);
                        }
                        continue;
                    }
                }
                body.push(ins.clone());
                origins.push(f.origin_of(i));
            }
            if changed {
                funcs[fi].body = body;
                funcs[fi].origins = origins;
            }
            // A callee inlined at its only call site is dropped at the end; its body is
            // let go of now, so that a chain of such calls, each inlined into the one
            // before (each body holding all those below it, up to the depth cap), does
            // not keep every level's copy until then. (Only unreachable functions can
            // still call it; they inline its `RET` alone and are dropped too.)
            for g in used_up {
                let callee = &mut funcs[g];
                let k = callee.body.len().saturating_sub(1);
                callee.body = callee.body.split_off(k);
                callee.origins = callee.origins.split_off(k.min(callee.origins.len()));
            }
        }
    }
    let mut out = Program { functions: funcs, superops: p.superops.clone(), scopes: p.scopes.clone(), inline_sites: sites, fused_parts: parts };
    let out_index = out.function_index();
    let graph: Vec<Vec<usize>> = out.functions.iter().map(|f| callees(&out_index, f)).collect::<Result<_, _>>()?;
    let reach = reachable(&graph, out.entry());
    let mut k = 0;
    out.functions.retain(|_| {
        k += 1;
        reach[k - 1]
    });
    Ok(out)
}

/// Whether the code after a `CALL` (`rest`) reaches `EXIT` with no control flow on the
/// way: a call in the failure branch of a NESL check, which runs at most once (the
/// shared function filling in the check record stays a call rather than a copy in
/// every check).
fn on_the_way_out(rest: &[vcode::Instr]) -> bool {
    rest.iter()
        .map(|i| i.op.info().exec)
        .find(|e| matches!(e, Exec::Call | Exec::Ret | Exec::If | Exec::Else | Exec::EndIf | Exec::Exit))
        == Some(Exec::Exit)
}

/// Adds an inline site (the origin of a `CALL` being replaced by its callee's body) and
/// returns its `Origin::inlined_at` number.
fn new_site(sites: &mut Vec<Origin>, call: Origin) -> u32 {
    sites.push(call);
    sites.len() as u32
}

/// The `inlined_at` number, for an instruction copied into a caller at inline site
/// `site`, of one whose `inlined_at` was `at` in the callee: `site` itself when `at` is 0;
/// otherwise a copy of the chain `at` whose outermost link (the site with `inlined_at`
/// 0, a call in the callee's own body) now points at `site`. The callee's chains are
/// left alone (the callee may stay, called from elsewhere); `chains` memoises the copies
/// made for this call site so that instructions sharing a chain share its copy.
fn rebase(sites: &mut Vec<Origin>, chains: &mut HashMap<u32, u32>, at: u32, site: u32) -> u32 {
    if at == 0 {
        return site;
    }
    if let Some(&k) = chains.get(&at) {
        return k;
    }
    // Walk the chain to its end, then copy it outermost-first so each copy can point at
    // the copy of its successor.
    let mut chain = Vec::new();
    let mut k = at;
    // (A number out of range, or a cycle, in a malformed table ends the chain.)
    while k != 0 && k as usize <= sites.len() && !chains.contains_key(&k) && chain.len() <= sites.len() {
        chain.push(k);
        k = sites[k as usize - 1].inlined_at;
    }
    let mut next = chains.get(&k).copied().unwrap_or(site);
    for &k in chain.iter().rev() {
        let o = sites[k as usize - 1];
        sites.push(Origin { inlined_at: next, ..o });
        next = sites.len() as u32;
        chains.insert(k, next);
    }
    next
}

fn reachable(graph: &[Vec<usize>], entry: usize) -> Vec<bool> {
    let mut seen = vec![false; graph.len()];
    let mut work = vec![entry];
    while let Some(v) = work.pop() {
        if v < seen.len() && !seen[v] {
            seen[v] = true;
            work.extend(&graph[v]);
        }
    }
    seen
}
