//! Prometheus text exposition of the client's metrics, fed by every metric event and
//! rendered by [`LlmClient::metrics`](crate::LlmClient::metrics).
//!
//! The layout is fixed so dashboards and the other toolnexus ports agree byte for byte:
//! metrics always in the same order, each with its HELP and TYPE lines, series sorted by
//! their label string, and the same histogram buckets everywhere.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;

/// Upper bounds of the duration histograms, in seconds (`+Inf` is implied).
const BUCKETS: [f64; 10] = [0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0];
const BUCKET_LABELS: [&str; 10] = [
    "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10", "30", "60",
];

#[derive(Default)]
struct Histogram {
    /// Non-cumulative counts per bucket; the last slot is `+Inf`.
    counts: [u64; BUCKETS.len() + 1],
    sum: f64,
    count: u64,
}

impl Histogram {
    fn observe(&mut self, seconds: f64) {
        let seconds = if seconds.is_finite() && seconds > 0.0 {
            seconds
        } else {
            0.0
        };
        let slot = BUCKETS
            .iter()
            .position(|&b| seconds <= b)
            .unwrap_or(BUCKETS.len());
        self.counts[slot] += 1;
        self.sum += seconds;
        self.count += 1;
    }
}

/// Series keyed by their rendered label string, so iteration order is the required order.
#[derive(Default)]
struct State {
    llm_requests: BTreeMap<String, u64>,
    llm_tokens: BTreeMap<String, u64>,
    llm_duration: BTreeMap<String, Histogram>,
    tool_calls: BTreeMap<String, u64>,
    tool_duration: BTreeMap<String, Histogram>,
    run_errors: BTreeMap<String, u64>,
    /// Label strings are rendered here first, so updating a series that already exists
    /// allocates nothing.
    scratch: String,
}

/// Applies `update` to the series of `map` labelled `pairs`, creating it on first use.
fn bump<V: Default>(
    map: &mut BTreeMap<String, V>,
    scratch: &mut String,
    pairs: &[(&str, &str)],
    update: impl FnOnce(&mut V),
) {
    scratch.clear();
    write_labels(scratch, pairs);
    match map.get_mut(scratch.as_str()) {
        Some(value) => update(value),
        None => update(map.entry(scratch.clone()).or_default()),
    }
}

/// Accumulates metric observations and renders them as Prometheus text.
#[derive(Default)]
pub(crate) struct Registry {
    state: Mutex<State>,
}

impl Registry {
    fn with<R>(&self, f: impl FnOnce(&mut State) -> R) -> R {
        // A panic while holding the lock cannot leave the counters inconsistent in a way
        // that matters for metrics, so a poisoned lock is simply reused.
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut state)
    }

    /// One LLM request: its outcome, its duration and the tokens it used.
    pub(crate) fn llm(
        &self,
        model: &str,
        status: &str,
        seconds: f64,
        prompt_tokens: u64,
        completion_tokens: u64,
    ) {
        self.with(|s| {
            let scratch = &mut s.scratch;
            let pairs = [("model", model), ("status", status)];
            bump(&mut s.llm_requests, scratch, &pairs, |n| *n += 1);
            bump(&mut s.llm_duration, scratch, &[("model", model)], |h| {
                h.observe(seconds)
            });
            for (kind, tokens) in [("prompt", prompt_tokens), ("completion", completion_tokens)] {
                if tokens > 0 {
                    bump(&mut s.llm_tokens, scratch, &[("type", kind)], |n| {
                        *n = n.saturating_add(tokens)
                    });
                }
            }
        });
    }

    /// One tool call.
    pub(crate) fn tool(&self, tool: &str, source: &str, is_error: bool, seconds: f64) {
        let is_error = if is_error { "true" } else { "false" };
        self.with(|s| {
            let scratch = &mut s.scratch;
            let pairs = [("tool", tool), ("source", source), ("is_error", is_error)];
            bump(&mut s.tool_calls, scratch, &pairs, |n| *n += 1);
            bump(&mut s.tool_duration, scratch, &[("tool", tool)], |h| {
                h.observe(seconds)
            });
        });
    }

    /// One run that ended in an error.
    pub(crate) fn run_error(&self, model: &str) {
        self.with(|s| {
            bump(
                &mut s.run_errors,
                &mut s.scratch,
                &[("model", model)],
                |n| *n += 1,
            )
        });
    }

    /// The exposition text, ending with a newline.
    pub(crate) fn render(&self) -> String {
        self.with(|s| {
            let mut out = String::new();
            counter(
                &mut out,
                "toolnexus_llm_requests_total",
                "LLM requests by model and status.",
                &s.llm_requests,
            );
            counter(
                &mut out,
                "toolnexus_llm_tokens_total",
                "LLM tokens used, by type.",
                &s.llm_tokens,
            );
            histogram(
                &mut out,
                "toolnexus_llm_request_duration_seconds",
                "LLM request duration in seconds.",
                &s.llm_duration,
            );
            counter(
                &mut out,
                "toolnexus_tool_calls_total",
                "Tool calls by tool, source and outcome.",
                &s.tool_calls,
            );
            histogram(
                &mut out,
                "toolnexus_tool_duration_seconds",
                "Tool call duration in seconds.",
                &s.tool_duration,
            );
            counter(
                &mut out,
                "toolnexus_run_errors_total",
                "Runs that ended in an error, by model.",
                &s.run_errors,
            );
            out
        })
    }
}

/// `name="value",…` with the exposition format's escapes (backslash, quote, newline).
fn write_labels(out: &mut String, pairs: &[(&str, &str)]) {
    for (i, (name, value)) in pairs.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(name);
        out.push_str("=\"");
        for c in value.chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '"' => out.push_str("\\\""),
                '\n' => out.push_str("\\n"),
                c => out.push(c),
            }
        }
        out.push('"');
    }
}

fn header(out: &mut String, name: &str, help: &str, kind: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

fn counter(out: &mut String, name: &str, help: &str, series: &BTreeMap<String, u64>) {
    header(out, name, help, "counter");
    for (labels, value) in series {
        let _ = writeln!(out, "{name}{{{labels}}} {value}");
    }
}

fn histogram(out: &mut String, name: &str, help: &str, series: &BTreeMap<String, Histogram>) {
    header(out, name, help, "histogram");
    for (labels, h) in series {
        let mut cumulative = 0;
        for (i, le) in BUCKET_LABELS.iter().enumerate() {
            cumulative += h.counts[i];
            let _ = writeln!(out, "{name}_bucket{{{labels},le=\"{le}\"}} {cumulative}");
        }
        let _ = writeln!(out, "{name}_bucket{{{labels},le=\"+Inf\"}} {}", h.count);
        let _ = writeln!(out, "{name}_sum{{{labels}}} {}", h.sum);
        let _ = writeln!(out, "{name}_count{{{labels}}} {}", h.count);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn before_any_activity_only_help_and_type_lines() {
        let text = Registry::default().render();
        assert!(text.ends_with('\n'));
        assert!(
            text.lines()
                .all(|l| l.starts_with("# HELP ") || l.starts_with("# TYPE ")),
            "{text}"
        );
        assert_eq!(text.lines().count(), 12);
    }

    #[test]
    fn series_are_sorted_and_labels_escaped() {
        let r = Registry::default();
        r.tool("zeta", "native", false, 0.01);
        r.tool("alpha", "native", true, 0.3);
        r.tool("we\"ird\\na\nme", "native", false, 100.0);
        let text = r.render();
        let calls: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("toolnexus_tool_calls_total{"))
            .collect();
        assert_eq!(
            calls,
            [
                r#"toolnexus_tool_calls_total{tool="alpha",source="native",is_error="true"} 1"#,
                r#"toolnexus_tool_calls_total{tool="we\"ird\\na\nme",source="native",is_error="false"} 1"#,
                r#"toolnexus_tool_calls_total{tool="zeta",source="native",is_error="false"} 1"#,
            ]
        );
        assert!(
            text.contains("toolnexus_tool_duration_seconds_bucket{tool=\"alpha\",le=\"0.25\"} 0\n")
        );
        assert!(
            text.contains("toolnexus_tool_duration_seconds_bucket{tool=\"alpha\",le=\"0.5\"} 1\n")
        );
        assert!(text.contains(
            "toolnexus_tool_duration_seconds_bucket{tool=\"we\\\"ird\\\\na\\nme\",le=\"60\"} 0\n"
        ));
        assert!(text.contains(
            "toolnexus_tool_duration_seconds_bucket{tool=\"we\\\"ird\\\\na\\nme\",le=\"+Inf\"} 1\n"
        ));
    }

    #[test]
    fn histogram_buckets_are_cumulative_and_never_negative() {
        let mut h = Histogram::default();
        for s in [0.01, 0.07, 0.07, 3.0, -1.0, f64::NAN] {
            h.observe(s);
        }
        assert_eq!(h.count, 6);
        assert_eq!(h.counts[0], 3, "0.01, and the invalid values clamped to 0");
        assert_eq!(h.counts[1], 2);
        assert!((h.sum - 3.15).abs() < 1e-9);
    }
}
