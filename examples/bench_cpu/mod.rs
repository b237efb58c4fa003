//! CPU time spent by the benchmark's Temporal worker, read from Linux's per-thread
//! accounting: `bench_temporal` and the hand-written floor (bench/temporal-floor, which
//! includes this file by path) both run their worker on threads named [`WORKER_THREADS`],
//! apart from the driver's and the scripted model's threads, and measure it here the same
//! way, so their "worker CPU per run" columns compare.
#![allow(dead_code)] // each includer uses part of it

use std::fs;
use std::time::Duration;

/// The name of every thread the worker runs on: the thread that drives it and its
/// runtime's threads (Linux keeps the first 15 bytes of a thread's name).
pub const WORKER_THREADS: &str = "bench-worker";

/// The CPU time spent so far by this process's threads named [`WORKER_THREADS`], from each
/// thread's `schedstat` (nanoseconds on a CPU). A thread that has exited takes its time
/// with it, so the worker's runtime keeps its threads alive for the whole benchmark.
/// `None` off Linux, or where the kernel keeps no scheduler statistics.
pub fn worker_cpu() -> Option<Duration> {
    let mut total = 0u64;
    for task in fs::read_dir("/proc/self/task").ok()? {
        let path = task.ok()?.path();
        // A thread that ended between the listing and the read counts for nothing.
        let Ok(name) = fs::read_to_string(path.join("comm")) else {
            continue;
        };
        if name.trim_end() != WORKER_THREADS {
            continue;
        }
        let Ok(stat) = fs::read_to_string(path.join("schedstat")) else {
            continue;
        };
        total += stat.split_whitespace().next()?.parse::<u64>().ok()?;
    }
    Some(Duration::from_nanos(total))
}

/// The CPU time spent so far by the whole process (every thread, exited ones too), user
/// and system, from `/proc/self/stat` in clock ticks of 1/100 s (Linux's `USER_HZ`).
pub fn process_cpu() -> Option<Duration> {
    let stat = fs::read_to_string("/proc/self/stat").ok()?;
    // The command name may hold spaces and parentheses: the fields follow its last `)`.
    let fields: Vec<&str> = stat[stat.rfind(')')? + 1..].split_whitespace().collect();
    // utime and stime are the stat file's 14th and 15th fields; `fields` starts at the 3rd.
    let user: u64 = fields.get(11)?.parse().ok()?;
    let system: u64 = fields.get(12)?.parse().ok()?;
    Some(Duration::from_millis((user + system) * 10))
}

/// A reading of both clocks, to subtract from a later one.
#[derive(Clone, Copy)]
pub struct Cpu {
    worker: Option<Duration>,
    process: Option<Duration>,
}

impl Cpu {
    /// Both clocks now.
    pub fn now() -> Cpu {
        Cpu {
            worker: worker_cpu(),
            process: process_cpu(),
        }
    }

    /// Milliseconds per run of the worker's and the process's CPU since `earlier`, over
    /// `runs` runs; `NaN` for a clock that could not be read.
    pub fn per_run_since(&self, earlier: &Cpu, runs: usize) -> (f64, f64) {
        let per = |now: Option<Duration>, then: Option<Duration>| match (now, then) {
            (Some(now), Some(then)) => now.saturating_sub(then).as_secs_f64() * 1e3 / runs as f64,
            _ => f64::NAN,
        };
        (
            per(self.worker, earlier.worker),
            per(self.process, earlier.process),
        )
    }
}
