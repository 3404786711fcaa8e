//! Calls run in parts, one part per thread.
//!
//! A flattened program spends the deep levels of a recursion (quicksort's last twenty
//! levels, a hull's or a tree's) in vector operations over many short segments: tens of
//! thousands of instances, operations of 40-130 us that are too short to pay for a second
//! thread, so a program that splits its work in two with every call still ran on one core
//! there. A call of a function over the instances of an apply-to-each whose instances are
//! independent (the front end records how its slots lie over them,
//! [`Function::instances`](crate::Function::instances): no random numbers, no effects)
//! can instead be cut into contiguous ranges of instances, one per thread of the CPU
//! library, each range run to the function's return by its own machine on a library of
//! one thread, and the parts' results put end to end: every instance computes what it
//! would have computed, in the same order, so the results are the same bits.
//!
//! A call is cut when it has from [`MIN_WORK`] to [`MAX_WORK`] elements, its instances
//! average at most [`MAX_MEAN_WEIGHT`], and the cut can give every part at most [`SLACK`]
//! times an equal share (the first calls of a recursion, with a few long instances, run
//! whole, each operation shared by the threads; a few levels down there are enough short
//! ones to share). The parts read their vector arguments in place and the library joins
//! their results: nothing goes through the host. A part that traps or stops the program
//! (a run-time error: it writes its message and exits) is dropped and the call runs
//! whole, so errors are reported as on one thread, and no later call of the run is cut;
//! an interrupt stops the run. Parts never cut their own calls (their libraries have one
//! thread). A run with a step limit never cuts (its count would differ). The instances
//! are the front end's knowledge, not VCODE's: a program read from VCODE text runs whole.

use crate::calls::CallStack;
use crate::cvl::cpu::CpuCvl;
use crate::cvl::{Cvl, HostScalar, HostVector, OpStats};
use crate::interp::{drive, Code, Machine, Value};
use crate::ir::{Instances, Lane, Program};
use crate::trap::{Trap, TrapKind};
use crate::RunOptions;
use std::any::Any;

/// Fewest instances and elements (of the arguments' vectors, every level) a call needs to
/// be cut. At `1 << 16` Barnes-Hut of 1,000 bodies (one call of 256 instances and 67K
/// elements cut, parts that took 2-6 and 6-11 ms) ran 1.40x slower on two threads than
/// on one (alternating runs, median of 25); at `1 << 18` 1.02x. (Quicksort of 100K, its
/// call of 100K then no longer cut, lost its 0.75-0.93x.)
const MIN_WORK: u64 = 1 << 18;

/// Most an instance may weigh on average (one plus its elements) for its call to be cut:
/// the calls with fewer, longer instances run whole, each of their operations long
/// enough to run on every thread. Measured on two threads, alternating runs, against no
/// cut at all: quicksort 1M 0.86x (cut at depth 6, 64 instances; with no bound on the
/// mean its cut falls at depth 3, 0.84-0.89x), quickhull 5M never cut (its two instances
/// at depth 2 cut were 1.12x).
const MAX_MEAN_WEIGHT: u64 = 1 << 14;

/// Most a call may weigh (its instances plus their elements) to be cut: a part's library
/// takes fresh memory for every vector of its share, and this machine faults fresh pages
/// in at two speeds, the slow one much slower than the work saved. Barnes-Hut 75K, whose
/// call at depth 5 has 1,024 instances and 5.5M elements, was 1.08-1.13x with it cut (its
/// runs as fast as uncut ones but for more slow ones; at depth 2, 16 instances, 1.39-1.47x);
/// quicksort 1M weighs 1M at every depth.
const MAX_WORK: u64 = 1 << 21;

/// Most a part may weigh, as a multiple of an equal share of the call.
const SLACK: f64 = 1.2;

/// Stack of the threads that run parts (the interpreter's loop is not recursive; the
/// libraries' kernels use little).
const PART_STACK: usize = 64 << 20;

/// Runs the call of the function at `target` with its arguments on top of `m`'s stack in
/// parts, if it can be (see the module documentation): then the arguments are replaced
/// by the results, as a return from the call would leave them, and the result is `true`.
/// `false`: the caller makes the call as usual. `depth` is the depth of the call.
pub(crate) fn call_in_parts<C: Cvl + 'static>(
    m: &mut Machine<'_, C>,
    p: &Program,
    code: &Code,
    target: usize,
    depth: usize,
    opts: &RunOptions,
    steps: &mut u64,
) -> Result<bool, Trap> {
    let Some(inst) = code.sites.get(target).and_then(|&(fi, _)| p.functions.get(fi)).and_then(|f| f.instances.as_ref()) else {
        return Ok(false);
    };
    if m.whole_calls || opts.max_steps.is_some() || !inst.results.iter().all(|l| matches!(l, Lane::Vector | Lane::Seq(_))) {
        return Ok(false);
    }
    let Some(cpu) = (&mut *m.cvl as &mut dyn Any).downcast_mut::<CpuCvl>() else { return Ok(false) };
    let threads = cpu.threads();
    let Some(stack) = (&mut m.stack as &mut dyn Any).downcast_mut::<Vec<Value<CpuCvl>>>() else { return Ok(false) };
    let Some(consts) = (&m.consts as &dyn Any).downcast_ref::<Vec<Value<CpuCvl>>>() else { return Ok(false) };
    let n: usize = inst.params.iter().map(Lane::slots).sum();
    if threads < 2 || stack.len() < n {
        return Ok(false);
    }
    let args = &stack[stack.len() - n..];
    let Some(ranges) = plan(cpu, inst, args, threads)? else { return Ok(false) };
    let mut lengths = Lengths::default();
    let mut parts = Vec::with_capacity(ranges.len());
    for &r in &ranges {
        let mut vals = Vec::with_capacity(n);
        let mut slot = 0;
        if cut(cpu, &inst.params, args, &mut slot, &mut lengths, r, &mut vals)?.is_none() {
            return Ok(false);
        }
        parts.push(vals);
    }
    // The constants too, as the parts' libraries read them: written out by this one.
    let consts = consts
        .iter()
        .map(|c| match c {
            Value::Vec(x) => cpu.part_whole(x).map(Value::Vec),
            c => Ok(c.clone()),
        })
        .collect::<Result<Vec<_>, Trap>>()?;
    let outcomes = run_parts(cpu, parts, &consts, p, code, target, depth, opts);
    let mut results = Vec::with_capacity(outcomes.len());
    for o in outcomes {
        match o {
            Err(t) if matches!(t.kind, TrapKind::Interrupted) => return Err(t),
            Ok(Some(r)) => results.push(r),
            // A part that trapped or exited: the call runs whole and reports it, and no
            // call is cut again (the calls it makes would fail the same way).
            Err(_) | Ok(None) => {
                m.whole_calls = true;
                return Ok(false);
            }
        }
    }
    let want: usize = inst.results.iter().map(Lane::slots).sum();
    if results.iter().any(|(s, _, _)| s.len() != want) {
        return Ok(false);
    }
    let mut out = Vec::with_capacity(want);
    let stacks: Vec<&[Value<CpuCvl>]> = results.iter().map(|(s, _, _)| s.as_slice()).collect();
    if join(cpu, &inst.results, &stacks, &mut 0, &mut out)?.is_none() {
        return Ok(false);
    }
    stack.truncate(stack.len() - n);
    stack.extend(out);
    for (_, stats, s) in &results {
        *steps += s;
        if opts.stats {
            m.stats.merge(stats);
        }
    }
    if opts.stats {
        m.stats.parts.0 += 1;
        m.stats.parts.1 += results.len() as u64;
    }
    Ok(true)
}

/// The ranges of instances of the parts (at least two), or `None` when the call should
/// run whole: its arguments do not lie as `inst` says, it has too little work, or no cut
/// shares it evenly enough.
fn plan(cpu: &mut CpuCvl, inst: &Instances, args: &[Value<CpuCvl>], threads: usize) -> Result<Option<Vec<(usize, usize)>>, Trap> {
    // The instances, from the context.
    let mut k = None;
    let mut slot = 0;
    for lane in &inst.params {
        if let (Lane::Context, Value::Seg(s)) = (lane, &args[slot]) {
            if cpu.segment_count(s) != 1 {
                return Ok(None);
            }
            k = Some(cpu.element_count(s));
        }
        slot += lane.slots();
    }
    let Some(k) = k else { return Ok(None) };
    // Each instance weighs one, plus the elements of its segment in every sequence: the
    // call's weight from the descriptors' totals, the instances' only for a call cut.
    let mut total = k as u64;
    let mut seqs = Vec::new();
    let mut slot = 0;
    for lane in &inst.params {
        match (lane, &args[slot]) {
            (Lane::Seq(_), Value::Seg(s)) => {
                if cpu.segment_count(s) != k {
                    return Ok(None);
                }
                total += cpu.element_count(s) as u64;
                seqs.push(s);
            }
            (Lane::Vector, Value::Vec(v)) if cpu.len(v) != k => return Ok(None),
            (Lane::Vector, Value::Scalar(_)) if k != 1 => return Ok(None),
            (Lane::Seq(_), _) | (Lane::Vector, Value::Seg(_) | Value::Pair(_)) => return Ok(None),
            _ => {}
        }
        slot += lane.slots();
    }
    let parts = threads.min(k);
    if total < MIN_WORK || total > MAX_WORK || parts < 2 || total / k as u64 > MAX_MEAN_WEIGHT {
        return Ok(None);
    }
    let mut weight = vec![1u64; k];
    for s in seqs {
        for (w, l) in weight.iter_mut().zip(cpu.segdes_to_host(s)?) {
            *w += l.max(0) as u64;
        }
    }
    // Cut where the running weight passes each multiple of an equal share.
    let share = total as f64 / parts as f64;
    let mut ranges = Vec::with_capacity(parts);
    let (mut start, mut acc) = (0usize, 0u64);
    for (i, &w) in weight.iter().enumerate() {
        acc += w;
        let j = ranges.len() + 1;
        if j < parts && acc as f64 >= share * j as f64 && i + 1 < k {
            ranges.push((start, i + 1));
            start = i + 1;
        }
    }
    ranges.push((start, k));
    let heaviest = ranges.iter().map(|&(a, b)| weight[a..b].iter().sum::<u64>()).max().unwrap_or(0);
    if ranges.len() < 2 || heaviest as f64 > SLACK * share {
        return Ok(None);
    }
    Ok(Some(ranges))
}

/// The lengths of each descriptor slot cut (and their running sums, one more than the
/// lengths), read once for all the parts.
#[derive(Default)]
struct Lengths(std::collections::HashMap<usize, (Vec<i64>, Vec<usize>)>);

impl Lengths {
    fn of(&mut self, cpu: &mut CpuCvl, slot: usize, v: &Value<CpuCvl>) -> Result<Option<&(Vec<i64>, Vec<usize>)>, Trap> {
        if !self.0.contains_key(&slot) {
            let Value::Seg(s) = v else { return Ok(None) };
            let lens = cpu.segdes_to_host(s)?;
            let mut starts = Vec::with_capacity(lens.len() + 1);
            let mut acc = 0usize;
            starts.push(0);
            for &l in &lens {
                acc += l.max(0) as usize;
                starts.push(acc);
            }
            self.0.insert(slot, (lens, starts));
        }
        Ok(self.0.get(&slot))
    }
}

/// Appends to `out` the slots of instances `range.0..range.1` (of the level of `lanes`)
/// of the values `args[*slot..]` laid out as `lanes`, advancing `*slot` past them; `None`
/// when they do not lie as `lanes` says. A vector's part is read in place
/// ([`CpuCvl::part_of`]); every vector a part gets is written out by this library, so a
/// part's library of one thread never runs this one's work.
fn cut(
    cpu: &mut CpuCvl,
    lanes: &[Lane],
    args: &[Value<CpuCvl>],
    slot: &mut usize,
    lengths: &mut Lengths,
    (a, b): (usize, usize),
    out: &mut Vec<Value<CpuCvl>>,
) -> Result<Option<()>, Trap> {
    for lane in lanes {
        let at = *slot;
        let Some(v) = args.get(at) else { return Ok(None) };
        *slot += 1;
        match (lane, v) {
            (Lane::Whole, Value::Vec(x)) => out.push(Value::Vec(cpu.part_whole(x)?)),
            (Lane::Whole, v) => out.push(v.clone()),
            (Lane::Context, _) => out.push(Value::Seg(cpu.segdes_from_host(&[(b - a) as i64])?)),
            (Lane::Vector, Value::Vec(x)) if cpu.len(x) >= b => out.push(Value::Vec(cpu.part_of(x, a, b)?)),
            (Lane::Vector, Value::Scalar(x)) if b <= 1 => out.push(Value::Scalar(*x)),
            (Lane::Vector, _) => return Ok(None),
            (Lane::Seq(inner), v) => {
                let Some((lens, starts)) = lengths.of(cpu, at, v)? else { return Ok(None) };
                if lens.len() < b {
                    return Ok(None);
                }
                let (part, inner_range) = (lens[a..b].to_vec(), (starts[a], starts[b]));
                out.push(Value::Seg(cpu.segdes_from_host(&part)?));
                if cut(cpu, inner, args, slot, lengths, inner_range, out)?.is_none() {
                    return Ok(None);
                }
            }
        }
    }
    Ok(Some(()))
}

/// Appends to `out` the slots laid out as `lanes` made by putting the parts' slots
/// (`parts[j][*slot..]`) end to end, advancing `*slot` past them; `None` when they do not
/// lie as `lanes` says.
fn join(cpu: &mut CpuCvl, lanes: &[Lane], parts: &[&[Value<CpuCvl>]], slot: &mut usize, out: &mut Vec<Value<CpuCvl>>) -> Result<Option<()>, Trap> {
    for lane in lanes {
        let at = *slot;
        *slot += 1;
        match lane {
            Lane::Vector => {
                let mut vs = Vec::with_capacity(parts.len());
                for part in parts {
                    vs.push(match part.get(at) {
                        Some(Value::Vec(x)) => x.clone(),
                        Some(Value::Scalar(x)) => cpu.from_host(one(*x))?,
                        _ => return Ok(None),
                    });
                }
                out.push(Value::Vec(cpu.joined(&vs)?));
            }
            Lane::Seq(inner) => {
                let mut lens = Vec::new();
                for part in parts {
                    let Some(Value::Seg(s)) = part.get(at) else { return Ok(None) };
                    lens.extend(cpu.segdes_to_host(s)?);
                }
                out.push(Value::Seg(cpu.segdes_from_host(&lens)?));
                if join(cpu, inner, parts, slot, out)?.is_none() {
                    return Ok(None);
                }
            }
            Lane::Whole | Lane::Context => return Ok(None),
        }
    }
    Ok(Some(()))
}

/// A one-element vector of `x`.
fn one(x: HostScalar) -> HostVector {
    match x {
        HostScalar::Int(v) => HostVector::Int(vec![v]),
        HostScalar::Float(v) => HostVector::Float(vec![v]),
        HostScalar::Bool(v) => HostVector::Bool(vec![v]),
    }
}

/// What a part gives: its results, its operation counts and its instruction count;
/// `None` when it stopped the program.
type Part = Option<(Vec<Value<CpuCvl>>, OpStats, u64)>;

/// Runs every part to the function's return, each on its own library of one thread: the
/// first on this thread, the others on threads of their own.
#[allow(clippy::too_many_arguments)]
fn run_parts(
    cpu: &CpuCvl,
    parts: Vec<Vec<Value<CpuCvl>>>,
    consts: &[Value<CpuCvl>],
    p: &Program,
    code: &Code,
    target: usize,
    depth: usize,
    opts: &RunOptions,
) -> Vec<Result<Part, Trap>> {
    let run = |args: Vec<Value<CpuCvl>>| -> Result<Part, Trap> {
        let mut lib = cpu.part_library();
        let mut m = Machine::part(&mut lib, args, consts.to_vec());
        let mut steps = 0;
        let mut calls = CallStack::default();
        // A part of an independent function writes nothing but a run-time error's
        // message, and the call then runs whole and writes it.
        let mut sink = std::io::sink();
        Ok(match drive(&mut m, p, code, target, &mut calls, depth, &mut sink, opts, &mut steps)? {
            Some(_) => None,
            None => Some((std::mem::take(&mut m.stack), std::mem::take(&mut m.stats), steps)),
        })
    };
    std::thread::scope(|sc| {
        let mut parts = parts.into_iter();
        let first = parts.next();
        let handles: Vec<_> = parts
            .map(|args| {
                let run = &run;
                std::thread::Builder::new().name("nesl-part".into()).stack_size(PART_STACK).spawn_scoped(sc, move || run(args))
            })
            .collect();
        let mut out = vec![first.map_or(Ok(None), run)];
        for h in handles {
            // A part whose thread could not be made, or that panicked: the call runs whole.
            out.push(h.ok().and_then(|h| h.join().ok()).unwrap_or(Ok(None)));
        }
        out
    })
}
