//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, the
//! protocol's own server checks) against the `conformance_server` example, once at each
//! protocol revision this crate serves. What the crate deliberately leaves out is listed
//! with its reason in the suite's baseline file beside this one; the suite fails on any other failure, and on a listed scenario that passes.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::Value;
use toolnexus_test_support::example_bin;

/// One revision's suite: the npm package that checks it, its baseline, and the scenarios
/// that must pass, checked one by one so that a scenario the suite stopped running cannot
/// pass unnoticed.
struct Revision {
    package: &'static str,
    baseline: &'static str,
    must_pass: &'static [&'static str],
}

/// What both revisions check of tools and elicitation over streamable HTTP.
const TOOLS: [&str; 4] = [
    "tools-list",
    "tools-call-simple-text",
    "tools-call-error",
    "dns-rebinding-protection",
];

const V2025_11_25: Revision = Revision {
    package: "conformance-2025-11-25",
    baseline: "baseline-2025-11-25.yml",
    must_pass: &[
        "server-initialize",
        "ping",
        "tools-call-elicitation",
        "elicitation-sep1034-defaults",
        "elicitation-sep1330-enums",
    ],
};

const V2026_07_28: Revision = Revision {
    package: "conformance-2026-07-28",
    baseline: "baseline-2026-07-28.yml",
    must_pass: &[
        "input-required-result-basic-elicitation",
        "input-required-result-request-state",
        "input-required-result-multi-round",
        "input-required-result-missing-input-response",
        "input-required-result-result-type",
        "input-required-result-unsupported-methods",
        "input-required-result-tampered-state",
        "input-required-result-ignore-extra-params",
        "input-required-result-validate-input",
        "tasks-mrtr-input",
        "tasks-lifecycle",
        "tasks-capability-negotiation",
        "tasks-wire-fields",
        "tasks-request-state-removal",
        "tasks-request-headers",
        "tasks-dispatch-and-envelope",
        "tasks-required-task-error",
        "tasks-mrtr-composition",
    ],
};

#[test]
fn the_2025_11_25_suite_passes_but_for_its_baseline() {
    run(&V2025_11_25);
}

#[test]
fn the_2026_07_28_suite_passes_but_for_its_baseline() {
    run(&V2026_07_28);
}

/// Where scripts/test.sh installed the suite and the Node it runs on.
fn installed() -> PathBuf {
    let dir = std::env::var_os("TOOLNEXUS_TEST_CONFORMANCE").unwrap_or_else(|| {
        panic!(
            "TOOLNEXUS_TEST_CONFORMANCE is not set: run the tests with scripts/test.sh (it \
             installs the MCP conformance suite and Node 22 into target/conformance), or \
             point it at a folder where `npm ci` ran on scripts/conformance/package.json"
        )
    });
    PathBuf::from(dir)
}

fn run(revision: &Revision) {
    let installed = installed();
    let node = installed.join("node_modules/.bin/node");
    let cli = installed
        .join("node_modules")
        .join(revision.package)
        .join("dist/index.js");
    for file in [&node, &cli] {
        assert!(
            file.is_file(),
            "{} is missing: TOOLNEXUS_TEST_CONFORMANCE must be where `npm ci` ran on \
             scripts/conformance/package.json (scripts/test.sh does it)",
            file.display()
        );
    }
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance");
    let results = scratch(revision.package);

    let server = Server::start();
    let out = Command::new(&node)
        .arg(&cli)
        .args(["server", "--url", &server.url])
        .arg("--expected-failures")
        .arg(here.join(revision.baseline))
        .arg("--output-dir")
        .arg(&results)
        // Draft and pending scenarios too: the 2026-07-28 ones are drafts until that
        // revision is released.
        .args(["--suite", "all"])
        .output()
        .expect("node starts the conformance suite");
    drop(server);
    let report = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "the conformance suite ({}) failed: a scenario outside {} failed, or one in it \
         now passes and must leave it (each scenario's checks are in {}):\n{report}",
        revision.package,
        revision.baseline,
        results.display()
    );
    for scenario in TOOLS.iter().chain(revision.must_pass) {
        passed(&results, scenario, &report);
    }
    // Kept only when the run fails, to read its checks.
    let _ = std::fs::remove_dir_all(&results);
}

/// Every check of `scenario` succeeded, as the suite wrote them to `checks.json`.
fn passed(results: &Path, scenario: &str, report: &str) {
    let prefix = format!("server-{scenario}-");
    let dir = std::fs::read_dir(results)
        .expect("the suite wrote its results")
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .find(|path| {
            path.file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_prefix(&prefix))
                // A timestamp follows, so a scenario named as the start of another's
                // name does not match it.
                .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
        })
        .unwrap_or_else(|| panic!("the suite did not run `{scenario}`:\n{report}"));
    let checks: Vec<Value> = serde_json::from_str(
        &std::fs::read_to_string(dir.join("checks.json")).expect("each scenario has checks.json"),
    )
    .expect("checks.json is JSON");
    assert!(!checks.is_empty(), "`{scenario}` made no checks");
    for check in &checks {
        let status = check["status"].as_str().unwrap_or("none");
        assert!(
            matches!(status, "SUCCESS" | "INFO" | "SKIPPED"),
            "`{scenario}` must pass, but its check {} is {status}: {}",
            check["id"],
            check["errorMessage"]
        );
    }
}

/// A fresh folder for one run's results.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("toolnexus-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("the temp dir is writable");
    dir
}

/// The example on a free loopback port, stopped when dropped.
struct Server {
    child: Child,
    url: String,
}

impl Server {
    fn start() -> Self {
        let mut child = example_bin::command("conformance_server")
            .args(["--port", "0"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the example starts");
        let stdout = child.stdout.take().expect("standard output is piped");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("the example writes where it listens");
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("the example's first line is its URL, not {line:?}"))
            .to_owned();
        Server { child, url }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
