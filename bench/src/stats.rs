//! The statistics of one `nesl run --stats-json FILE`, as JSON: what the harness reads
//! back from every child run (CVL operation counts, the device's counters on a GPU
//! backend, the CPU library's thread count and the process's peak memory).
//!
//! ```json
//! {"ops": [{"kind": "elementwise", "calls": 3, "elements": 300}],
//!  "total_calls": 3, "total_elements": 300, "instructions": 40,
//!  "device": null,
//!  "threads": 8, "peak_rss_bytes": 12345678}
//! ```
//!
//! On a device backend `device` is `{"name": "NVIDIA H100 (sm_90)", "counters":
//! {"kernel launches": 5, "host round trips": 9, ...}}`.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One CVL family's counts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpCount {
    /// The CVL family (`elementwise`, `scan`, `permute`, ...).
    pub kind: String,
    /// Calls of that family.
    pub calls: u64,
    /// Elements those calls touched (inputs plus outputs).
    pub elements: u64,
}

/// A device backend's name and counters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceStats {
    /// The device, as the backend names it (`NVIDIA H100 (sm_90)`).
    pub name: String,
    /// Counter name to value (`kernel launches`, `host round trips`, bytes moved, ...).
    pub counters: BTreeMap<String, u64>,
}

/// Everything `nesl run --stats-json` writes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunStats {
    /// Counts per CVL family, in first-use order (empty when the backend keeps none).
    pub ops: Vec<OpCount>,
    /// Sum of the calls.
    pub total_calls: u64,
    /// Sum of the elements.
    pub total_elements: u64,
    /// VCODE instructions executed; `null` when the executor does not count them.
    #[serde(default)]
    pub instructions: Option<u64>,
    /// The device's counters on a GPU backend; `null` on the CPU.
    pub device: Option<DeviceStats>,
    /// `[kind, n]`: host round trips by the family of the VCODE instruction that caused
    /// them (GPU backend; empty on the CPU).
    #[serde(default)]
    pub round_trips: Vec<(String, u64)>,
    /// Threads of the CPU vector library in that process.
    pub threads: usize,
    /// The process's peak resident memory (`VmHWM`) at the end of the run; `null` where
    /// the system does not say.
    pub peak_rss_bytes: Option<u64>,
}

impl RunStats {
    /// The statistics of a run from its operation rows `(kind, calls, elements)`, the
    /// device's name and counters (if any), and the thread count. Reads the peak memory now.
    pub fn new(rows: &[(String, u64, u64)], device: Option<(String, Vec<(String, u64)>)>, threads: usize) -> RunStats {
        RunStats {
            ops: rows.iter().map(|(k, c, e)| OpCount { kind: k.clone(), calls: *c, elements: *e }).collect(),
            total_calls: rows.iter().map(|r| r.1).sum(),
            total_elements: rows.iter().map(|r| r.2).sum(),
            instructions: None,
            round_trips: Vec::new(),
            device: device.map(|(name, rows)| DeviceStats { name, counters: rows.into_iter().collect() }),
            threads,
            peak_rss_bytes: peak_rss_bytes(),
        }
    }

    /// A device counter by name (`kernel launches`, `host round trips`).
    pub fn counter(&self, name: &str) -> Option<u64> {
        self.device.as_ref()?.counters.get(name).copied()
    }

    /// The CVL operations counted: `None` when the backend counted none.
    pub fn cvl_ops(&self) -> Option<u64> {
        (!self.ops.is_empty()).then_some(self.total_calls)
    }
}

/// This process's peak resident memory in bytes (`VmHWM` of `/proc/self/status`), or
/// `None` where that file does not exist or does not say.
pub fn peak_rss_bytes() -> Option<u64> {
    parse_vmhwm(&std::fs::read_to_string("/proc/self/status").ok()?)
}

/// The `VmHWM:   1234 kB` line of a `/proc/PID/status` text, in bytes.
pub fn parse_vmhwm(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let mut words = line["VmHWM:".len()..].split_whitespace();
    let value: u64 = words.next()?.parse().ok()?;
    let unit = match words.next().unwrap_or("kB") {
        "B" => 1,
        "kB" => 1024,
        "mB" | "MB" => 1024 * 1024,
        "gB" | "GB" => 1024 * 1024 * 1024,
        _ => return None,
    };
    Some(value * unit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vmhwm_lines_parse() {
        let status = "Name:\tnesl\nVmPeak:\t  200000 kB\nVmHWM:\t   51200 kB\nVmRSS:\t 1000 kB\n";
        assert_eq!(parse_vmhwm(status), Some(51200 * 1024));
        assert_eq!(parse_vmhwm("Name: x\n"), None);
        assert_eq!(parse_vmhwm("VmHWM: lots kB\n"), None);
        if cfg!(target_os = "linux") {
            assert!(peak_rss_bytes().unwrap_or(0) > 0);
        }
    }

    #[test]
    fn stats_round_trip_through_json() {
        let rows = vec![("elementwise".to_string(), 3, 300), ("scan".to_string(), 1, 20)];
        let dev = ("NVIDIA H100 (sm_90)".to_string(), vec![("kernel launches".to_string(), 5), ("host round trips".to_string(), 9)]);
        let s = RunStats::new(&rows, Some(dev), 4);
        assert_eq!((s.total_calls, s.total_elements, s.cvl_ops()), (4, 320, Some(4)));
        let text = serde_json::to_string(&s).unwrap();
        let back: RunStats = serde_json::from_str(&text).unwrap();
        assert_eq!(back, s);
        assert_eq!(back.counter("kernel launches"), Some(5));
        assert_eq!(back.counter("host round trips"), Some(9));
        assert_eq!(back.counter("bytes"), None);
    }

    #[test]
    fn the_documented_shape_parses() {
        let cpu = r#"{"ops":[{"kind":"elementwise","calls":3,"elements":300}],"total_calls":3,
                      "total_elements":300,"device":null,"threads":8,"peak_rss_bytes":null}"#;
        let s: RunStats = serde_json::from_str(cpu).unwrap();
        assert_eq!((s.threads, s.peak_rss_bytes, s.counter("kernel launches")), (8, None, None));
        let gpu = r#"{"ops":[],"total_calls":0,"total_elements":0,"threads":1,"peak_rss_bytes":1,
                      "device":{"name":"gpu","counters":{"kernel launches":5,"host round trips":2}}}"#;
        let s: RunStats = serde_json::from_str(gpu).unwrap();
        assert_eq!((s.cvl_ops(), s.counter("host round trips")), (None, Some(2)));
        assert!(serde_json::from_str::<RunStats>("{\"ops\": []}").is_err());
    }
}
