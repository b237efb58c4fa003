//! Prometheus text exposition of the client's metrics, fed by every metric event and
//! rendered by [`LlmClient::metrics`](crate::LlmClient::metrics).
//!
//! The text is byte-identical to what the other toolnexus ports render for the same events,
//! so one dashboard reads them all: the same metrics in the same order, the same HELP
//! strings, label names in the same order, series sorted by their label string, the same
//! histogram buckets, and sums written as ECMAScript's `String(number)` writes them.

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

/// How a model request ended, as its `status` label says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LlmStatus {
    /// A complete, successful response.
    Ok,
    /// An error status, or no complete response at all.
    Error,
}

impl LlmStatus {
    fn label(self) -> &'static str {
        match self {
            LlmStatus::Ok => "ok",
            LlmStatus::Error => "error",
        }
    }
}

/// One series of a metric: its label values, the label text they render to (written once,
/// when the series first appears) and its value.
struct Series<V> {
    values: Box<[Box<str>]>,
    labels: String,
    value: V,
}

/// A metric's series, kept in order of their label values so an observation finds its
/// series by comparing values, without rendering or hashing anything; rendering sorts them
/// by their label text, the order the exposition requires.
struct Family<V>(Vec<Series<V>>);

impl<V> Default for Family<V> {
    fn default() -> Self {
        Family(Vec::new())
    }
}

impl<V: Default> Family<V> {
    /// Applies `update` to the series labelled `pairs`, creating it on first use.
    fn bump(&mut self, pairs: &[(&str, &str)], update: impl FnOnce(&mut V)) {
        let found = self.0.binary_search_by(|s| {
            let stored = s.values.iter().map(|v| &**v);
            stored.cmp(pairs.iter().map(|(_, v)| *v))
        });
        match found {
            Ok(i) => update(&mut self.0[i].value),
            Err(i) => {
                let mut labels = String::new();
                write_labels(&mut labels, pairs);
                let mut value = V::default();
                update(&mut value);
                let values = pairs.iter().map(|(_, v)| Box::from(*v)).collect();
                self.0.insert(
                    i,
                    Series {
                        values,
                        labels,
                        value,
                    },
                );
            }
        }
    }

    /// The series with their label text, in the exposition's order.
    fn sorted(&self) -> Vec<(&str, &V)> {
        let mut series: Vec<(&str, &V)> = self
            .0
            .iter()
            .map(|s| (s.labels.as_str(), &s.value))
            .collect();
        series.sort_unstable_by(|a, b| a.0.cmp(b.0));
        series
    }
}

#[derive(Default)]
struct State {
    llm_requests: Family<u64>,
    llm_tokens: Family<u64>,
    llm_duration: Family<Histogram>,
    tool_calls: Family<u64>,
    tool_duration: Family<Histogram>,
    run_errors: Family<u64>,
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

    /// One LLM request: its outcome, its duration and the tokens it used. Tokens are
    /// counted for successful requests only (both series, even at zero), as in every port.
    pub(crate) fn llm(
        &self,
        model: &str,
        status: LlmStatus,
        seconds: f64,
        prompt_tokens: u64,
        completion_tokens: u64,
    ) {
        self.with(|s| {
            let pairs = [("model", model), ("status", status.label())];
            s.llm_requests.bump(&pairs, |n| *n += 1);
            if status == LlmStatus::Ok {
                for (kind, tokens) in [("prompt", prompt_tokens), ("completion", completion_tokens)]
                {
                    s.llm_tokens
                        .bump(&[("type", kind)], |n| *n = n.saturating_add(tokens));
                }
            }
            s.llm_duration
                .bump(&[("model", model)], |h| h.observe(seconds));
        });
    }

    /// One tool call. A suspension is `pending`, never `is_error`.
    pub(crate) fn tool(
        &self,
        tool: &str,
        source: &str,
        is_error: bool,
        pending: bool,
        seconds: f64,
    ) {
        let is_error = if is_error { "true" } else { "false" };
        let pending = if pending { "true" } else { "false" };
        self.with(|s| {
            let pairs = [
                ("tool", tool),
                ("source", source),
                ("is_error", is_error),
                ("pending", pending),
            ];
            s.tool_calls.bump(&pairs, |n| *n += 1);
            s.tool_duration
                .bump(&[("tool", tool)], |h| h.observe(seconds));
        });
    }

    /// One run that ended in an error.
    pub(crate) fn run_error(&self, model: &str) {
        self.with(|s| s.run_errors.bump(&[("model", model)], |n| *n += 1));
    }

    /// The exposition text, ending with a newline.
    pub(crate) fn render(&self) -> String {
        self.with(|s| {
            let mut out = String::new();
            counter(
                &mut out,
                "toolnexus_llm_requests_total",
                "Total LLM requests.",
                &s.llm_requests,
            );
            counter(
                &mut out,
                "toolnexus_llm_tokens_total",
                "Total tokens, by type.",
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
                "Total tool calls.",
                &s.tool_calls,
            );
            histogram(
                &mut out,
                "toolnexus_tool_duration_seconds",
                "Tool execution duration in seconds.",
                &s.tool_duration,
            );
            counter(
                &mut out,
                "toolnexus_run_errors_total",
                "Total run errors.",
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
        let mut start = 0;
        for (at, byte) in value.bytes().enumerate() {
            let escaped = match byte {
                b'\\' => "\\\\",
                b'"' => "\\\"",
                b'\n' => "\\n",
                _ => continue,
            };
            // Each of the three is one ASCII byte, so `at` is a character boundary.
            out.push_str(&value[start..at]);
            out.push_str(escaped);
            start = at + 1;
        }
        out.push_str(&value[start..]);
        out.push('"');
    }
}

fn header(out: &mut String, name: &str, help: &str, kind: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

fn counter(out: &mut String, name: &str, help: &str, series: &Family<u64>) {
    header(out, name, help, "counter");
    for (labels, value) in series.sorted() {
        let _ = writeln!(out, "{name}{{{labels}}} {value}");
    }
}

fn histogram(out: &mut String, name: &str, help: &str, series: &Family<Histogram>) {
    header(out, name, help, "histogram");
    for (labels, h) in series.sorted() {
        let mut cumulative = 0;
        for (i, le) in BUCKET_LABELS.iter().enumerate() {
            cumulative += h.counts[i];
            let _ = writeln!(out, "{name}_bucket{{{labels},le=\"{le}\"}} {cumulative}");
        }
        let _ = writeln!(out, "{name}_bucket{{{labels},le=\"+Inf\"}} {}", h.count);
        let _ = write!(out, "{name}_sum{{{labels}}} ");
        write_number(out, h.sum);
        out.push('\n');
        let _ = writeln!(out, "{name}_count{{{labels}}} {}", h.count);
    }
}

/// `x` as ECMAScript's `String(number)` writes it, the form every port's text uses: the
/// shortest digits that read back to `x`, plain decimal from 1e-6 up to 1e21, exponent
/// notation (`1e-7`, `1.5e+21`) outside that range, and no `.0` on whole numbers.
fn write_number(out: &mut String, x: f64) {
    if x == 0.0 {
        out.push('0');
        return;
    }
    if !x.is_finite() {
        out.push_str(if x.is_nan() {
            "NaN"
        } else if x > 0.0 {
            "Infinity"
        } else {
            "-Infinity"
        });
        return;
    }
    if x < 0.0 {
        out.push('-');
    }
    // `{:e}` gives the shortest round-trip digits: `1.2e-1`, `6e1`.
    let scientific = format!("{:e}", x.abs());
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let k = digits.len() as i32;
    // The decimal point sits after `n` digits: x = 0.d1d2… × 10^n.
    let n = exponent.parse::<i32>().unwrap_or(0) + 1;
    let zeros = |count: i32| "0".repeat(count.max(0) as usize);
    if k <= n && n <= 21 {
        out.push_str(&digits);
        out.push_str(&zeros(n - k));
    } else if 0 < n && n <= 21 {
        let (whole, fraction) = digits.split_at(n as usize);
        out.push_str(whole);
        out.push('.');
        out.push_str(fraction);
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        out.push_str(&zeros(-n));
        out.push_str(&digits);
    } else {
        let (first, rest) = digits.split_at(1);
        out.push_str(first);
        if !rest.is_empty() {
            out.push('.');
            out.push_str(rest);
        }
        let _ = write!(out, "e{}{}", if n > 0 { '+' } else { '-' }, (n - 1).abs());
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
        r.tool("zeta", "native", false, false, 0.01);
        r.tool("alpha", "native", true, false, 0.3);
        r.tool("we\"ird\\na\nme", "native", false, true, 100.0);
        let text = r.render();
        let calls: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("toolnexus_tool_calls_total{"))
            .collect();
        assert_eq!(
            calls,
            [
                r#"toolnexus_tool_calls_total{tool="alpha",source="native",is_error="true",pending="false"} 1"#,
                r#"toolnexus_tool_calls_total{tool="we\"ird\\na\nme",source="native",is_error="false",pending="true"} 1"#,
                r#"toolnexus_tool_calls_total{tool="zeta",source="native",is_error="false",pending="false"} 1"#,
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

    /// The reference text all ports render for one successful model request (120 ms, 3
    /// prompt and 2 completion tokens), one native tool call (40 ms) and one run that
    /// ended without error.
    const REFERENCE: &str = r#"# HELP toolnexus_llm_requests_total Total LLM requests.
# TYPE toolnexus_llm_requests_total counter
toolnexus_llm_requests_total{model="gpt-x",status="ok"} 1
# HELP toolnexus_llm_tokens_total Total tokens, by type.
# TYPE toolnexus_llm_tokens_total counter
toolnexus_llm_tokens_total{type="completion"} 2
toolnexus_llm_tokens_total{type="prompt"} 3
# HELP toolnexus_llm_request_duration_seconds LLM request duration in seconds.
# TYPE toolnexus_llm_request_duration_seconds histogram
toolnexus_llm_request_duration_seconds_bucket{model="gpt-x",le="0.05"} 0
toolnexus_llm_request_duration_seconds_bucket{model="gpt-x",le="0.1"} 0
toolnexus_llm_request_duration_seconds_bucket{model="gpt-x",le="0.25"} 1
toolnexus_llm_request_duration_seconds_bucket{model="gpt-x",le="0.5"} 1
toolnexus_llm_request_duration_seconds_bucket{model="gpt-x",le="1"} 1
toolnexus_llm_request_duration_seconds_bucket{model="gpt-x",le="2.5"} 1
toolnexus_llm_request_duration_seconds_bucket{model="gpt-x",le="5"} 1
toolnexus_llm_request_duration_seconds_bucket{model="gpt-x",le="10"} 1
toolnexus_llm_request_duration_seconds_bucket{model="gpt-x",le="30"} 1
toolnexus_llm_request_duration_seconds_bucket{model="gpt-x",le="60"} 1
toolnexus_llm_request_duration_seconds_bucket{model="gpt-x",le="+Inf"} 1
toolnexus_llm_request_duration_seconds_sum{model="gpt-x"} 0.12
toolnexus_llm_request_duration_seconds_count{model="gpt-x"} 1
# HELP toolnexus_tool_calls_total Total tool calls.
# TYPE toolnexus_tool_calls_total counter
toolnexus_tool_calls_total{tool="add",source="native",is_error="false",pending="false"} 1
# HELP toolnexus_tool_duration_seconds Tool execution duration in seconds.
# TYPE toolnexus_tool_duration_seconds histogram
toolnexus_tool_duration_seconds_bucket{tool="add",le="0.05"} 1
toolnexus_tool_duration_seconds_bucket{tool="add",le="0.1"} 1
toolnexus_tool_duration_seconds_bucket{tool="add",le="0.25"} 1
toolnexus_tool_duration_seconds_bucket{tool="add",le="0.5"} 1
toolnexus_tool_duration_seconds_bucket{tool="add",le="1"} 1
toolnexus_tool_duration_seconds_bucket{tool="add",le="2.5"} 1
toolnexus_tool_duration_seconds_bucket{tool="add",le="5"} 1
toolnexus_tool_duration_seconds_bucket{tool="add",le="10"} 1
toolnexus_tool_duration_seconds_bucket{tool="add",le="30"} 1
toolnexus_tool_duration_seconds_bucket{tool="add",le="60"} 1
toolnexus_tool_duration_seconds_bucket{tool="add",le="+Inf"} 1
toolnexus_tool_duration_seconds_sum{tool="add"} 0.04
toolnexus_tool_duration_seconds_count{tool="add"} 1
# HELP toolnexus_run_errors_total Total run errors.
# TYPE toolnexus_run_errors_total counter
"#;

    #[test]
    fn the_reference_event_set_renders_the_reference_text() {
        let r = Registry::default();
        r.llm("gpt-x", LlmStatus::Ok, 120.0 / 1000.0, 3, 2);
        r.tool("add", "native", false, false, 40.0 / 1000.0);
        assert_eq!(r.render(), REFERENCE);
    }

    #[test]
    fn failed_requests_count_no_tokens_and_successful_ones_count_zero_too() {
        let r = Registry::default();
        r.llm("m", LlmStatus::Error, 0.2, 7, 7);
        let text = r.render();
        assert!(text.contains("toolnexus_llm_requests_total{model=\"m\",status=\"error\"} 1\n"));
        assert!(!text.contains("toolnexus_llm_tokens_total{"), "{text}");
        r.llm("m", LlmStatus::Ok, 0.2, 0, 0);
        let text = r.render();
        assert!(text.contains("toolnexus_llm_tokens_total{type=\"completion\"} 0\n"));
        assert!(text.contains("toolnexus_llm_tokens_total{type=\"prompt\"} 0\n"));
    }

    #[test]
    fn numbers_are_written_as_ecmascript_writes_them() {
        let cases: [(f64, &str); 16] = [
            (0.0, "0"),
            (0.12, "0.12"),
            (0.04, "0.04"),
            (60.0, "60"),
            (2.5, "2.5"),
            (100.0, "100"),
            (0.1 + 0.2, "0.30000000000000004"),
            (0.000001, "0.000001"),
            (0.0000015, "0.0000015"),
            (1e-7, "1e-7"),
            (1.5e-7, "1.5e-7"),
            (123456.789, "123456.789"),
            (1e20, "100000000000000000000"),
            (1e21, "1e+21"),
            (1.25e22, "1.25e+22"),
            (-0.5, "-0.5"),
        ];
        for (x, expected) in cases {
            let mut out = String::new();
            write_number(&mut out, x);
            assert_eq!(out, expected, "{x:e}");
        }
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
