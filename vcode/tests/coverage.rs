//! Coverage audit of the VCODE fixtures in `regression/vcode/`.
//!
//! * Every instruction of the table ([`vcode::op::OPCODES`]) appears in some good fixture,
//!   with every type argument the table accepts for it, and every form of `CONST`.
//! * Run on a vector library that wraps the CPU one and records the shape of each call,
//!   the fixtures call every segmented CVL operation with zero segments, one segment,
//!   many segments and an empty segment, and every operation on an empty vector.
//!
//! A new instruction or CVL method without a fixture makes these tests fail, naming it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use vcode::cvl::cpu::{CpuSegdes, CpuVector};
use vcode::cvl::{BinOp, ReduceOp, UnOp};
use vcode::{Const, Cvl, CpuCvl, HostScalar, HostVector, Imm, SuperOp, Trap, VType};

/// The good fixtures (`regression/vcode/` and its `stdin/`): name, program, standard input.
fn fixtures() -> Vec<(String, vcode::Program, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../regression/vcode");
    let mut paths: Vec<PathBuf> = Vec::new();
    for dir in [root.clone(), root.join("stdin")] {
        paths.extend(
            std::fs::read_dir(&dir)
                .expect("fixture directory")
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == "vcode" || e == "fcode")),
        );
    }
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let src = std::fs::read_to_string(&p).expect("read fixture");
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let prog = vcode::parse(&src).unwrap_or_else(|e| panic!("{name} does not parse: {e:?}"));
            let stdin = std::fs::read(p.with_extension("stdin")).unwrap_or_default();
            (name, prog, stdin)
        })
        .collect()
}

/// The form of a constant: its type and whether it is a scalar, a list or an empty list.
fn const_form(c: &Const) -> String {
    let (ty, n, list) = match c {
        Const::Int(v, l) => ("INT", v.len(), *l),
        Const::Float(v, l) => ("FLOAT", v.len(), *l),
        Const::Bool(v, l) => ("BOOL", v.len(), *l),
        Const::Segdes(v, l) => ("SEGDES", v.len(), *l),
        Const::Char(s) => ("CHAR", s.len(), true),
        // Not VCODE text: only programs built in one process hold these.
        Const::Resident(_) => return "CONST resident".into(),
    };
    let shape = match (list, n) {
        (false, _) => "scalar",
        (true, 0) => "empty",
        (true, _) => "list",
    };
    format!("CONST {ty} {shape}")
}

#[test]
fn every_instruction_and_type_has_a_fixture() {
    let mut seen: BTreeSet<String> = BTreeSet::new();
    for (_, p, _) in fixtures() {
        for f in &p.functions {
            for ins in &f.body {
                let name = ins.op.info().name;
                seen.insert(name.to_string());
                if let Some(t) = ins.ty {
                    seen.insert(format!("{name} {}", t.name()));
                }
                if let Imm::Const(c) = &ins.imm {
                    seen.insert(const_form(c));
                }
            }
        }
    }
    let mut want: Vec<String> = Vec::new();
    for &op in vcode::op::OPCODES {
        let info = op.info();
        want.push(info.name.to_string());
        want.extend(info.types.iter().map(|t| format!("{} {}", info.name, t.name())));
    }
    for ty in ["INT", "FLOAT", "BOOL"] {
        for shape in ["scalar", "list", "empty"] {
            want.push(format!("CONST {ty} {shape}"));
        }
    }
    want.extend(["CONST SEGDES scalar", "CONST SEGDES list", "CONST SEGDES empty", "CONST CHAR list"].map(String::from));
    let missing: Vec<&String> = want.iter().filter(|w| !seen.contains(*w)).collect();
    assert!(missing.is_empty(), "no fixture in regression/vcode uses: {missing:?}");
}

/// Shapes of the calls one CVL method received.
#[derive(Default, Debug)]
struct Shapes(BTreeSet<&'static str>);

/// A vector library that runs on [`CpuCvl`] and records, per method, the shapes of its
/// operands: `empty` (a data operand with no elements), and for segmented methods
/// `m=0`, `m=1`, `m>1` and `empty-segment` (some segment of length 0).
struct Recorder {
    cpu: CpuCvl,
    calls: BTreeMap<&'static str, Shapes>,
    /// The same shapes by the element type of the first data operand:
    /// `"scan FLOAT m=0"`.
    typed: BTreeSet<String>,
}

impl Recorder {
    fn note(&mut self, method: &'static str, vs: &[&CpuVector], ss: &[&CpuSegdes]) {
        let mut shapes = Vec::new();
        if vs.iter().any(|v| self.cpu.len(v) == 0) {
            shapes.push("empty");
        }
        for s in ss {
            let m = self.cpu.segment_count(s);
            shapes.push(match m {
                0 => "m=0",
                1 => "m=1",
                _ => "m>1",
            });
            let lens = self.cpu.segdes_to_host(s).expect("lengths");
            if lens.contains(&0) {
                shapes.push("empty-segment");
            }
        }
        if let Some(v) = vs.first() {
            let t = self.cpu.vtype(v).name();
            self.typed.extend(shapes.iter().map(|sh| format!("{method} {t} {sh}")));
        }
        self.calls.entry(method).or_default().0.extend(shapes);
    }
}

impl Cvl for Recorder {
    type Vector = CpuVector;
    type Segdes = CpuSegdes;

    fn name(&self) -> &'static str {
        "recorder"
    }
    fn len(&self, v: &CpuVector) -> usize {
        self.cpu.len(v)
    }
    fn vtype(&self, v: &CpuVector) -> VType {
        self.cpu.vtype(v)
    }
    fn segment_count(&self, s: &CpuSegdes) -> usize {
        self.cpu.segment_count(s)
    }
    fn element_count(&self, s: &CpuSegdes) -> usize {
        self.cpu.element_count(s)
    }
    fn from_host(&mut self, v: HostVector) -> Result<CpuVector, Trap> {
        self.cpu.from_host(v)
    }
    fn to_host(&mut self, v: &CpuVector) -> Result<HostVector, Trap> {
        self.cpu.to_host(v)
    }
    fn get_int(&mut self, v: &CpuVector, i: usize) -> Result<i64, Trap> {
        self.cpu.get_int(v, i)
    }
    fn get_bool(&mut self, v: &CpuVector, i: usize) -> Result<bool, Trap> {
        self.cpu.get_bool(v, i)
    }
    fn fill(&mut self, value: HostScalar, n: usize) -> Result<CpuVector, Trap> {
        self.cpu.fill(value, n)
    }
    fn make_segdes(&mut self, lengths: &CpuVector) -> Result<CpuSegdes, Trap> {
        self.note("make_segdes", &[lengths], &[]);
        self.cpu.make_segdes(lengths)
    }
    fn segdes_from_host(&mut self, lengths: &[i64]) -> Result<CpuSegdes, Trap> {
        self.cpu.segdes_from_host(lengths)
    }
    fn lengths(&mut self, s: &CpuSegdes) -> Result<CpuVector, Trap> {
        self.note("lengths", &[], &[s]);
        self.cpu.lengths(s)
    }
    fn segdes_to_host(&mut self, s: &CpuSegdes) -> Result<Vec<i64>, Trap> {
        self.cpu.segdes_to_host(s)
    }
    fn binary(&mut self, op: BinOp, a: &CpuVector, b: &CpuVector) -> Result<CpuVector, Trap> {
        self.note("binary", &[a, b], &[]);
        self.cpu.binary(op, a, b)
    }
    fn unary(&mut self, op: UnOp, a: &CpuVector) -> Result<CpuVector, Trap> {
        self.note("unary", &[a], &[]);
        self.cpu.unary(op, a)
    }
    fn select(&mut self, f: &CpuVector, a: &CpuVector, b: &CpuVector) -> Result<CpuVector, Trap> {
        self.note("select", &[f, a, b], &[]);
        self.cpu.select(f, a, b)
    }
    fn rand(&mut self, bounds: &CpuVector) -> Result<CpuVector, Trap> {
        self.note("rand", &[bounds], &[]);
        self.cpu.rand(bounds)
    }
    fn srand(&mut self, seed: i64) -> Result<(), Trap> {
        self.cpu.srand(seed)
    }
    fn scan(&mut self, op: ReduceOp, v: &CpuVector, s: &CpuSegdes) -> Result<CpuVector, Trap> {
        self.note("scan", &[v], &[s]);
        self.cpu.scan(op, v, s)
    }
    fn reduce(&mut self, op: ReduceOp, v: &CpuVector, s: &CpuSegdes) -> Result<CpuVector, Trap> {
        self.note("reduce", &[v], &[s]);
        self.cpu.reduce(op, v, s)
    }
    fn permute(&mut self, v: &CpuVector, i: &CpuVector, s: &CpuSegdes) -> Result<CpuVector, Trap> {
        self.note("permute", &[v, i], &[s]);
        self.cpu.permute(v, i, s)
    }
    fn dpermute(
        &mut self,
        v: &CpuVector,
        i: &CpuVector,
        d: &CpuVector,
        ss: &CpuSegdes,
        sd: &CpuSegdes,
    ) -> Result<CpuVector, Trap> {
        self.note("dpermute", &[v, i, d], &[ss, sd]);
        self.cpu.dpermute(v, i, d, ss, sd)
    }
    fn fpermute(
        &mut self,
        v: &CpuVector,
        i: &CpuVector,
        f: &CpuVector,
        ss: &CpuSegdes,
        sd: &CpuSegdes,
    ) -> Result<CpuVector, Trap> {
        self.note("fpermute", &[v, i, f], &[ss, sd]);
        self.cpu.fpermute(v, i, f, ss, sd)
    }
    fn bpermute(&mut self, v: &CpuVector, i: &CpuVector, ss: &CpuSegdes, sd: &CpuSegdes) -> Result<CpuVector, Trap> {
        self.note("bpermute", &[v, i], &[ss, sd]);
        self.cpu.bpermute(v, i, ss, sd)
    }
    fn bfpermute(
        &mut self,
        v: &CpuVector,
        i: &CpuVector,
        f: &CpuVector,
        ss: &CpuSegdes,
        sd: &CpuSegdes,
    ) -> Result<CpuVector, Trap> {
        self.note("bfpermute", &[v, i, f], &[ss, sd]);
        self.cpu.bfpermute(v, i, f, ss, sd)
    }
    fn dfpermute(
        &mut self,
        v: &CpuVector,
        i: &CpuVector,
        f: &CpuVector,
        d: &CpuVector,
        ss: &CpuSegdes,
        sd: &CpuSegdes,
    ) -> Result<CpuVector, Trap> {
        self.note("dfpermute", &[v, i, f, d], &[ss, sd]);
        self.cpu.dfpermute(v, i, f, d, ss, sd)
    }
    fn dist(&mut self, x: &CpuVector, s: &CpuSegdes) -> Result<CpuVector, Trap> {
        self.note("dist", &[x], &[s]);
        self.cpu.dist(x, s)
    }
    fn index(&mut self, b: &CpuVector, k: &CpuVector, s: &CpuSegdes) -> Result<CpuVector, Trap> {
        self.note("index", &[b, k], &[s]);
        self.cpu.index(b, k, s)
    }
    fn extract(&mut self, v: &CpuVector, i: &CpuVector, s: &CpuSegdes) -> Result<CpuVector, Trap> {
        self.note("extract", &[v, i], &[s]);
        self.cpu.extract(v, i, s)
    }
    fn replace(&mut self, v: &CpuVector, i: &CpuVector, x: &CpuVector, s: &CpuSegdes) -> Result<CpuVector, Trap> {
        self.note("replace", &[v, i, x], &[s]);
        self.cpu.replace(v, i, x, s)
    }
    fn pack(&mut self, v: &CpuVector, f: &CpuVector, s: &CpuSegdes) -> Result<(CpuVector, CpuSegdes), Trap> {
        self.note("pack", &[v, f], &[s]);
        self.cpu.pack(v, f, s)
    }
    fn rank(&mut self, up: bool, v: &CpuVector, s: &CpuSegdes) -> Result<CpuVector, Trap> {
        self.note("rank", &[v], &[s]);
        self.cpu.rank(up, v, s)
    }
    fn fused(&mut self, op: &SuperOp, args: &[Option<&CpuVector>], len: usize) -> Result<CpuVector, Trap> {
        let vs: Vec<&CpuVector> = args.iter().flatten().copied().collect();
        self.note("fused", &vs, &[]);
        self.cpu.fused(op, args, len)
    }
}

#[test]
fn every_cvl_operation_meets_its_edge_cases() {
    let mut rec = Recorder { cpu: CpuCvl::new(), calls: BTreeMap::new(), typed: BTreeSet::new() };
    for (name, p, stdin) in fixtures() {
        vcode::verify(&p).unwrap_or_else(|e| panic!("{name} does not verify: {e:?}"));
        let opts = vcode::RunOptions { stdin: Some(stdin), ..Default::default() };
        vcode::run(&p, &mut rec, &mut std::io::sink(), &opts)
            .unwrap_or_else(|t| panic!("{name} trapped: {t}"));
    }
    let segmented = [
        "scan", "reduce", "permute", "dpermute", "fpermute", "bpermute", "bfpermute", "dfpermute", "dist", "index",
        "extract", "replace", "pack", "rank", "lengths",
    ];
    let flat = ["binary", "unary", "select", "make_segdes", "fused"];
    let mut missing = Vec::new();
    for m in segmented {
        for shape in ["m=0", "m=1", "m>1", "empty-segment"] {
            // Every segment of EXTRACT and REPLACE is indexed, so none may be empty: that
            // case is the trap of `bad/extract_empty_segment.vcode`.
            let impossible = shape == "empty-segment" && matches!(m, "extract" | "replace");
            if !impossible && !rec.calls.get(m).is_some_and(|s| s.0.contains(shape)) {
                missing.push(format!("{m} with {shape}"));
            }
        }
    }
    for m in segmented.iter().filter(|m| **m != "lengths").chain(&flat).chain(&["rand"]) {
        if !rec.calls.get(m).is_some_and(|s| s.0.contains("empty")) {
            missing.push(format!("{m} on an empty vector"));
        }
    }
    // At every element type (the kernels of other backends are written per type).
    let all = &["INT", "FLOAT", "BOOL"][..];
    let typed: [(&str, &[&str]); 14] = [
        ("dpermute", all),
        ("fpermute", all),
        ("bfpermute", all),
        ("dfpermute", all),
        ("index", &["INT"]),
        ("scan", all),
        ("reduce", all),
        ("permute", all),
        ("bpermute", all),
        ("dist", all),
        ("pack", all),
        ("extract", all),
        ("replace", all),
        ("rank", &["INT", "FLOAT"]),
    ];
    for (m, types) in typed {
        for t in types {
            for shape in ["m=0", "m=1", "m>1", "empty-segment"] {
                let impossible = shape == "empty-segment" && matches!(m, "extract" | "replace");
                if !impossible && !rec.typed.contains(&format!("{m} {t} {shape}")) {
                    missing.push(format!("{m} on {t} with {shape}"));
                }
            }
        }
    }
    assert!(missing.is_empty(), "no fixture in regression/vcode calls: {missing:#?}");
}
