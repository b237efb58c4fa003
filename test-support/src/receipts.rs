//! Receipts checked by the independent verifier, `toolnexus-inbox/tests/receipts/verify.py`:
//! Python with the `cryptography` package and a JCS of its own, so a receipt the inbox
//! signs is shown to check out outside Rust. Needs `TOOLNEXUS_TEST_PYTHON` (the test
//! command's venv).

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{json, Value};

/// The verifier script.
pub fn verifier_script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../toolnexus-inbox/tests/receipts/verify.py")
}

/// The Python with the `cryptography` package that checks receipts.
pub fn python() -> String {
    crate::sdk::python("cryptography")
}

/// What the verifier says of each receipt, checked with the SPKI PEM `public_key_pem`:
/// `Ok(())`, or `Err` with its reason.
pub fn python_verdicts(public_key_pem: &str, receipts: &[Value]) -> Vec<Result<(), String>> {
    judge(json!({"publicKey": public_key_pem, "receipts": receipts}))
}

/// As [`python_verdicts`], the verifier also computing each answer's data digest on its
/// own: `data[i]` is the data the `i`th receipt's answer carried (`None`: it had none),
/// which that receipt's `answer.data` must be the digest of.
pub fn python_verdicts_with_data(
    public_key_pem: &str,
    receipts: &[Value],
    data: &[Option<Value>],
) -> Vec<Result<(), String>> {
    assert_eq!(receipts.len(), data.len(), "one answer's data per receipt");
    let answers: Vec<Value> = data
        .iter()
        .map(|d| match d {
            Some(d) => json!({"data": d}),
            None => json!({}),
        })
        .collect();
    judge(json!({"publicKey": public_key_pem, "receipts": receipts, "answers": answers}))
}

fn judge(document: Value) -> Vec<Result<(), String>> {
    let receipts = document["receipts"].as_array().map_or(0, Vec::len);
    static FILES: AtomicUsize = AtomicUsize::new(0);
    let file = std::env::temp_dir().join(format!(
        "toolnexus-receipts-{}-{}.json",
        std::process::id(),
        FILES.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::write(&file, document.to_string()).expect("the receipts file is written");
    let out = Command::new(python())
        .arg(verifier_script())
        .arg(&file)
        .output()
        .expect("the verifier starts");
    let _ = std::fs::remove_file(&file);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let verdicts: Vec<Result<(), String>> = stdout
        .lines()
        .filter(|line| line.starts_with("ok ") || line.starts_with("FAIL "))
        .map(|line| match line.strip_prefix("ok ") {
            Some(_) => Ok(()),
            None => Err(line.to_owned()),
        })
        .collect();
    assert_eq!(
        verdicts.len(),
        receipts,
        "the verifier did not judge every receipt (exit {:?}):\n{stdout}\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    let failed = verdicts.iter().any(Result::is_err);
    assert_eq!(
        out.status.success(),
        !failed,
        "the verifier's exit status disagrees with its verdicts:\n{stdout}"
    );
    verdicts
}

/// Checks every receipt with the verifier; panics with its output when any fails.
pub fn verify_with_python(public_key_pem: &str, receipts: &[Value]) {
    let verdicts = python_verdicts(public_key_pem, receipts);
    let failures: Vec<&String> = verdicts.iter().filter_map(|v| v.as_ref().err()).collect();
    assert!(
        failures.is_empty(),
        "the Python verifier refused receipts:\n{}",
        failures
            .iter()
            .map(|f| f.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
}
