//! The VCODE stepper: the interpreter one instruction at a time, for debuggers.
//!
//! A [`Stepper`] runs the same decoded code and the same instruction semantics as
//! [`crate::run`], but returns after every instruction so a caller can look at the
//! program counter, the call stack and the stack entries in between. [`crate::run`]
//! does not go through it, so the normal run path pays nothing for it.
//!
//! ```
//! let p = vcode::parse("FUNC MAIN\nCONST INT 2\nCALL SQ\nRET\nFUNC SQ\nCOPY 1 0\n* INT\nRET\n").unwrap();
//! let mut cvl = vcode::CpuCvl::new();
//! let mut s = vcode::Stepper::new(&p, &mut cvl, &Default::default()).unwrap();
//! let mut out = Vec::new();
//! s.step(&mut out).unwrap(); // CONST INT 2
//! s.step(&mut out).unwrap(); // CALL SQ
//! assert_eq!(s.location(), vcode::Location { function: 1, instr: 0 });
//! assert_eq!(s.backtrace().len(), 2);
//! while s.step(&mut out).unwrap() == vcode::StepEvent::Stepped {}
//! assert_eq!(s.read_slot(0).unwrap(), vcode::HostValue::Int(vec![4]));
//! ```

use crate::calls::CallStack;
use crate::cvl::{Cvl, VType};
use crate::interp::{decode, site_of, site_with_stack, to_host_value, Arg, Code, Flow, Machine, Value};
use crate::op::Exec;
use crate::trap::{Trap, TrapKind};
use crate::{HostValue, Program, RunOptions};
use std::io::Write;

/// A place in the program: function index (into [`Program::functions`]) and instruction
/// index inside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Location {
    /// Index of the function in the program.
    pub function: usize,
    /// Index of the instruction in the function's body.
    pub instr: usize,
}

/// What one [`Stepper::step`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepEvent {
    /// One instruction ran; the program goes on.
    Stepped,
    /// The entry function returned: the program has finished (its final stack stays
    /// readable).
    Finished,
    /// `EXIT` ran with this status.
    Exited(i64),
}

/// What a stack slot holds, without copying its data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SlotInfo {
    /// A data vector of this element type and length.
    Vector(VType, usize),
    /// A segment descriptor with this many segments over this many elements.
    Segdes {
        /// Number of segments.
        segments: usize,
        /// Total length of the segments.
        elements: usize,
    },
    /// A `PAIR` of two slots.
    Pair(Box<SlotInfo>, Box<SlotInfo>),
}

/// Whether the stepper can still run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Running,
    Finished,
    Exited(i64),
    Trapped,
}

/// The VCODE interpreter stopped between instructions. Generic over the vector library.
pub struct Stepper<'a, C: Cvl> {
    prog: &'a Program,
    code: Code,
    machine: Machine<'a, C>,
    pc: usize,
    /// Return addresses of the active calls, outermost first.
    calls: CallStack,
    starts: Vec<usize>,
    max_call_depth: usize,
    steps: u64,
    state: State,
}

impl<'a, C: Cvl> Stepper<'a, C> {
    /// Links `prog` and loads its constants into `cvl`; the stepper stands before the
    /// first instruction of the entry function. Only `max_call_depth` of `opts` is used.
    pub fn new(prog: &'a Program, cvl: &'a mut C, opts: &RunOptions) -> Result<Self, Trap> {
        let code = decode(prog)?;
        let machine = Machine::load(prog, cvl, &crate::Residents::new())?;
        let mut starts = Vec::with_capacity(prog.functions.len());
        let mut n = 0;
        for f in &prog.functions {
            starts.push(n);
            n += f.body.len();
        }
        let pc = code.entry;
        Ok(Stepper {
            prog,
            code,
            machine,
            pc,
            calls: CallStack::default(),
            starts,
            max_call_depth: opts.max_call_depth,
            steps: 0,
            state: State::Running,
        })
    }

    /// The program being stepped.
    pub fn program(&self) -> &'a Program {
        self.prog
    }

    /// True while instructions remain to run (not finished, exited or trapped).
    pub fn is_running(&self) -> bool {
        self.state == State::Running
    }

    /// Instructions executed so far.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// The instruction that runs next (after the end: the last one that ran).
    pub fn location(&self) -> Location {
        self.location_of(self.pc)
    }

    fn location_of(&self, pc: usize) -> Location {
        let (function, instr) = self.code.sites.get(pc).copied().unwrap_or((0, 0));
        Location { function, instr }
    }

    /// The call stack, innermost first: the current location, then the `CALL`
    /// instruction of each active call.
    pub fn backtrace(&self) -> Vec<Location> {
        let mut out = vec![self.location()];
        out.extend(self.calls.returns().rev().map(|r| self.location_of(r - 1)));
        out
    }

    /// Number of active calls (0 in the entry function).
    pub fn call_depth(&self) -> usize {
        self.calls.depth()
    }

    /// The function a `CALL` at the current location would enter, if it is one.
    pub fn pending_call(&self) -> Option<usize> {
        match self.code.code.get(self.pc) {
            Some(d) if d.exec == Exec::Call && self.state == State::Running => match d.arg {
                Arg::Target(t) | Arg::Tail(t) => self.code.sites.get(t).map(|s| s.0),
                _ => None,
            },
            _ => None,
        }
    }

    /// Runs one instruction. Program output goes to `out`. A trap stops the stepper
    /// for good (and names the instruction); stepping a stopped program is an error.
    pub fn step(&mut self, out: &mut dyn Write) -> Result<StepEvent, Trap> {
        match self.state {
            State::Running => {}
            _ => return Err(Trap::new(TrapKind::Unsupported("the program is not running".into()))),
        }
        let prog = self.prog;
        let pc = self.pc;
        let Some(d) = self.code.code.get(pc).copied() else {
            self.state = State::Trapped;
            let site = site_of(prog, &self.code, pc.saturating_sub(1));
            return Err(Trap::new(TrapKind::Unsupported("ran past the end of the code".into())).at(|| site));
        };
        self.steps += 1;
        let stepped = self.machine.step(pc, &d, prog, out).and_then(|f| {
            // An interrupt made a vector operation skip work: its result is incomplete.
            if crate::interrupt::abandoned() {
                Err(Trap::new(TrapKind::Interrupted))
            } else {
                Ok(f)
            }
        });
        let flow = match stepped {
            Ok(f) => f,
            Err(t) => {
                self.state = State::Trapped;
                let at = t.raised_at(pc);
                return Err(t.at_in(prog, || site_with_stack(prog, &self.code, at, &self.calls)));
            }
        };
        let event = match flow {
            Flow::Next => {
                self.pc += 1;
                StepEvent::Stepped
            }
            Flow::Jump(t) => {
                self.pc = t;
                StepEvent::Stepped
            }
            Flow::Call(t) => {
                if self.calls.depth() >= self.max_call_depth {
                    self.state = State::Trapped;
                    let site = site_with_stack(prog, &self.code, pc, &self.calls);
                    return Err(Trap::new(TrapKind::CallStackOverflow(self.max_call_depth)).at(|| site));
                }
                self.calls.call(pc + 1);
                self.pc = t;
                StepEvent::Stepped
            }
            Flow::TailCall(t) => {
                self.calls.tail_call(pc + 1);
                self.pc = t;
                StepEvent::Stepped
            }
            Flow::Ret => match self.calls.ret() {
                Some(r) => {
                    self.pc = r;
                    StepEvent::Stepped
                }
                None => {
                    self.state = State::Finished;
                    StepEvent::Finished
                }
            },
            Flow::Exit(s) => {
                self.state = State::Exited(s);
                StepEvent::Exited(s)
            }
        };
        if event != StepEvent::Stepped {
            self.machine.files.flush();
            let _ = out.flush();
        }
        Ok(event)
    }

    /// The decoded-instruction index where function `function` starts (for
    /// breakpoints), or `None` if there is no such function.
    pub fn function_start(&self, function: usize) -> Option<usize> {
        self.starts.get(function).copied()
    }

    /// Number of stack slots.
    pub fn stack_len(&self) -> usize {
        self.machine.stack.len()
    }

    /// What slot `i` holds (0 = bottom), without copying it.
    pub fn slot_info(&self, i: usize) -> Option<SlotInfo> {
        self.machine.stack.get(i).map(|v| info(&*self.machine.cvl, v))
    }

    /// Copies slot `i` (0 = bottom) to the host. A pair cannot be copied.
    pub fn read_slot(&mut self, i: usize) -> Result<HostValue, Trap> {
        let v = self
            .machine
            .stack
            .get(i)
            .cloned()
            .ok_or_else(|| Trap::new(TrapKind::Unsupported(format!("no stack slot {i}"))))?;
        to_host_value(self.machine.cvl, &v)
    }
}

fn info<C: Cvl>(cvl: &C, v: &Value<C>) -> SlotInfo {
    match v {
        Value::Vec(x) => SlotInfo::Vector(cvl.vtype(x), cvl.len(x)),
        Value::Scalar(x) => SlotInfo::Vector(x.vtype(), 1),
        Value::Seg(s) => SlotInfo::Segdes { segments: cvl.segment_count(s), elements: cvl.element_count(s) },
        Value::Pair(p) => SlotInfo::Pair(Box::new(info(cvl, &p.0)), Box::new(info(cvl, &p.1))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{parse, run, CpuCvl, RunOutcome};

    /// A recursive function with `IF`/`ELSE`, a segmented reduction and output.
    const FACT: &str = "FUNC MAIN\nCONST INT 5\nCALL FACT\nCONST INT (1 2 3)\nCONST SEGDES (2 1)\n+_REDUCE INT\n\
        CONST CHAR \"hi\"\nWRITE CHAR\nPOP 2 0\nRET\n\
        FUNC FACT\nCOPY 1 0\nCONST INT 1\n<= INT\nIF\nPOP 1 0\nCONST INT 1\nELSE\nCOPY 1 0\nCONST INT 1\n- INT\n\
        CALL FACT\n* INT\nENDIF\nRET\n";

    fn stepped(src: &str) -> (Vec<HostValue>, Vec<u8>, u64, usize) {
        let p = parse(src).unwrap();
        let mut cvl = CpuCvl::new();
        let mut s = Stepper::new(&p, &mut cvl, &RunOptions::default()).unwrap();
        let mut out = Vec::new();
        let mut deepest = 0;
        while s.step(&mut out).unwrap() == StepEvent::Stepped {
            deepest = deepest.max(s.backtrace().len());
        }
        assert!(!s.is_running());
        assert!(s.step(&mut out).is_err(), "a finished program cannot step");
        let stack = (0..s.stack_len()).map(|i| s.read_slot(i).unwrap()).collect();
        (stack, out, s.steps(), deepest)
    }

    #[test]
    fn stepping_gives_the_same_stack_and_output_as_run() {
        let (stack, out, steps, deepest) = stepped(FACT);
        let p = parse(FACT).unwrap();
        let mut run_out = Vec::new();
        let r = run(&p, &mut CpuCvl::new(), &mut run_out, &RunOptions::default()).unwrap();
        assert_eq!(r.outcome, RunOutcome::Finished(stack.clone()));
        assert_eq!(stack[0], HostValue::Int(vec![120]));
        assert_eq!(stack[1], HostValue::Int(vec![3, 3]));
        assert_eq!(out, run_out);
        assert_eq!(deepest, 6, "MAIN plus five nested FACT calls");
        assert!(steps > 40);
    }

    #[test]
    fn backtrace_and_pending_call_name_the_places() {
        let p = parse(FACT).unwrap();
        let mut cvl = CpuCvl::new();
        let mut s = Stepper::new(&p, &mut cvl, &RunOptions::default()).unwrap();
        let mut out = Vec::new();
        s.step(&mut out).unwrap();
        assert_eq!(s.pending_call(), Some(1));
        s.step(&mut out).unwrap();
        assert_eq!(s.location(), Location { function: 1, instr: 0 });
        assert_eq!(s.backtrace(), vec![Location { function: 1, instr: 0 }, Location { function: 0, instr: 1 }]);
        assert_eq!(s.call_depth(), 1);
        assert_eq!(s.function_start(1), Some(9));
        assert_eq!(s.slot_info(0), Some(SlotInfo::Vector(VType::Int, 1)));
    }

    #[test]
    fn a_trap_names_its_instruction_and_stops_the_stepper() {
        let p = parse("FUNC MAIN\nCONST INT 1\nCONST INT 0\n/ INT\nRET\n").unwrap();
        let mut cvl = CpuCvl::new();
        let mut s = Stepper::new(&p, &mut cvl, &RunOptions::default()).unwrap();
        let mut out = Vec::new();
        s.step(&mut out).unwrap();
        s.step(&mut out).unwrap();
        let t = s.step(&mut out).unwrap_err();
        assert_eq!(t.kind, TrapKind::DivisionByZero);
        assert_eq!(t.site.map(|x| x.instr), Some("/ INT".to_string()));
        assert!(!s.is_running());
    }

    /// Serial code runs on host scalars (constants, element-wise results over them,
    /// `LENGTH`, the `LENGTHS` of one segment); an instruction that works on vectors gets
    /// them made, and its results stay vectors. Without host scalars every slot is a
    /// vector; the final values agree.
    #[test]
    fn serial_code_runs_on_host_scalars_and_vector_work_on_vectors() {
        const SRC: &str = "FUNC MAIN\nCONST INT 6\nCONST INT 7\n* INT\nCONST FLOAT (1.5 2.5 3.5)\nLENGTH FLOAT\n\
            + INT\nCONST INT 2\nMAKE_SEGDES\nDIST INT\nCONST INT 1\nCONST INT 0\n> INT\nIF\nCONST INT 5\nELSE\nCONST INT 6\nENDIF\n\
            I_TO_F\nCONST SEGDES 4\nLENGTHS\nCONST SEGDES (2 0)\nLENGTHS\nRET\n";
        // The kind of each slot after each instruction: S a host scalar, V a vector, D a
        // segment descriptor.
        let kinds = |on: bool| {
            let p = parse(SRC).unwrap();
            let mut cvl = CpuCvl::new().with_host_scalars(on);
            let mut s = Stepper::new(&p, &mut cvl, &RunOptions::default()).unwrap();
            let mut seen = Vec::new();
            while s.step(&mut std::io::sink()).unwrap() == StepEvent::Stepped {
                let k: String = s.machine.stack.iter().map(|v| match v {
                    Value::Scalar(_) => 'S',
                    Value::Vec(_) => 'V',
                    Value::Seg(_) => 'D',
                    Value::Pair(_) => 'P',
                }).collect();
                seen.push(k);
            }
            let values: Vec<HostValue> = (0..s.stack_len()).map(|i| s.read_slot(i).unwrap()).collect();
            (seen, values)
        };
        let (with, values) = kinds(true);
        assert_eq!(
            with,
            ["S", "SS", "S", "SV", "SS", "S", "SS", "SD", "V", "VS", "VSS", "VS", "V", "VS", "VS", "VS", "VSD", "VSS", "VSSD", "VSSV"],
        );
        let (without, values_without) = kinds(false);
        assert!(without.iter().all(|k| !k.contains('S')), "{without:?}");
        assert_eq!(values, values_without);
        assert_eq!(
            values,
            [HostValue::Int(vec![45, 45]), HostValue::Float(vec![5.0]), HostValue::Int(vec![4]), HostValue::Int(vec![2, 0])]
        );
    }
}
