//! This process's memory, read from /proc (Linux), for the benchmarks' figures.

use anyhow::{Context, Result};

/// A memory figure of this process from /proc (Linux), in kB: `VmHWM` (peak), `VmRSS` (now).
pub fn proc_status_kb(field: &str) -> Result<u64> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(field).and_then(|rest| rest.strip_prefix(':')))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .with_context(|| format!("{field} not found in /proc/self/status"))
}
