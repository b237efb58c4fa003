//! Receipts signed with an inbox's key check out in Rust and in a verifier written apart
//! (`verify.py`: Python's `cryptography` and a JCS of its own), and a receipt changed in
//! any field, or in its signature, fails both. Run through `scripts/test.sh`, which sets
//! `TOOLNEXUS_TEST_PYTHON`.

use std::process::Command;

use serde_json::{json, Value};
use toolnexus::receipt::{ReceiptAnswer, Statement};
use toolnexus::{call_digest, data_digest, Answer, Receipt, Refusal};
use toolnexus_inbox::receipt::{verify, PublicKey, ReceiptError, ReceiptKey};
use toolnexus_test_support::receipts::{
    python, python_verdicts, python_verdicts_with_data, verify_with_python,
};

/// Answers of every shape a receipt states, with the calls they settle: data full of
/// numbers JCS writes its own way and keys it sorts by UTF-16, refusals known and not,
/// delegation, and text in many scripts.
fn answered() -> Vec<(Statement, Option<Value>)> {
    let numbers = json!({
        "amount": 40.5, "whole": 40.0, "big": 1e21, "small": 1e-7, "tiny": 5e-324,
        "beyond": 9_007_199_254_740_993_u64, "negative": -0.0, "third": 333_333_333.333_333_3,
        "\u{20ac}": 1, "\r": 2, "\u{fb33}": 3, "1": 4, "😀": 5, "\u{80}": 6, "ö": 7,
        "text": "Zoë \u{2028} \"quoted\" \\ \u{1}\t/", "list": [null, true, false, [], {}]
    });
    let form = json!({"zip": "75001", "city": "Saint-Étienne", "floor": -2});
    let edited = json!({"order": "A-1", "amount": 30});
    let answers = [
        (
            Answer::ok("req-1").with_data(numbers),
            json!({"order": "A-1", "amount": 40}),
            (
                "bob@example.com",
                Some("ada@example.com"),
                "delegation: bob for ada",
            ),
        ),
        (
            Answer::decline("請求-2", "declined"),
            json!({"path": "/tmp/ü"}),
            ("Zoë Åström", None, "responders"),
        ),
        (
            Answer::refuse("req-3", Refusal::Other("trop cher — «non»".into()))
                .with_data(json!(["x", 1.5, {"b": 1, "a": 2}])),
            json!({}),
            ("ops", Some("финансы"), "kind: approval"),
        ),
        (
            Answer::ok("req-4").with_data(form),
            json!({"zip": null}),
            ("ada@example.com", None, "anyone"),
        ),
        (
            Answer::ok("req-5").with_args(edited.clone()),
            edited,
            ("bob@example.com", Some("ada@example.com"), "responders"),
        ),
    ];
    answers
        .into_iter()
        .enumerate()
        .map(|(i, (answer, args, (by, on_behalf_of, rule)))| {
            let mut statement = Statement::new(
                &answer.id,
                format!("run-{i}"),
                call_digest("refund", &args),
                ReceiptAnswer::of(&answer),
                by,
                format!("2026-01-0{}T03:04:05.{i:03}Z", i + 1),
                rule,
            );
            if let Some(who) = on_behalf_of {
                statement = statement.on_behalf_of(who);
            }
            (statement, answer.data)
        })
        .collect()
}

fn signed(key: &ReceiptKey) -> (Vec<Receipt>, Vec<Option<Value>>) {
    answered()
        .into_iter()
        .map(|(statement, data)| (key.sign(statement), data))
        .unzip()
}

fn wire(receipts: &[Receipt]) -> Vec<Value> {
    receipts
        .iter()
        .map(|r| serde_json::to_value(r).unwrap())
        .collect()
}

#[test]
fn receipts_check_out_in_rust_and_in_python() {
    let key = ReceiptKey::ephemeral_for_tests().unwrap();
    let public = key.public_key();
    let (receipts, data) = signed(&key);
    for receipt in &receipts {
        verify(receipt, &public).unwrap();
        // As a system handed the receipt reads it: from its JSON text.
        let text = serde_json::to_string(receipt).unwrap();
        let read: Receipt = serde_json::from_str(&text).unwrap();
        verify(&read, &public).unwrap();
    }
    for (receipt, data) in receipts.iter().zip(&data) {
        assert_eq!(
            receipt.statement.answer.data,
            data.as_ref().map(data_digest),
            "the receipt states the digest of the answer's data"
        );
    }
    assert_eq!(receipts[0].statement.on_behalf_of, "ada@example.com");
    assert_eq!(receipts[1].statement.on_behalf_of, "Zoë Åström");
    let pem = public.to_pem();
    verify_with_python(&pem, &wire(&receipts));
    let verdicts = python_verdicts_with_data(&pem, &wire(&receipts), &data);
    assert!(verdicts.iter().all(Result::is_ok), "{verdicts:?}");

    // Another key's public key checks none of them.
    let other = ReceiptKey::ephemeral_for_tests().unwrap().public_key();
    for receipt in &receipts {
        assert!(matches!(
            verify(receipt, &other),
            Err(ReceiptError::OtherKey { .. })
        ));
    }
    let verdicts = python_verdicts(&other.to_pem(), &wire(&receipts));
    assert!(verdicts.iter().all(Result::is_err), "{verdicts:?}");
}

/// `value` with one character changed (the first: the last of a base64 text can stand for
/// bits a lenient decoder drops), or flipped when it is not text.
fn changed(value: &Value) -> Value {
    match value {
        Value::String(text) => {
            let mut chars: Vec<char> = text.chars().collect();
            chars[0] = if chars[0] == 'A' { 'B' } else { 'A' };
            Value::String(chars.into_iter().collect())
        }
        Value::Bool(b) => Value::Bool(!b),
        Value::Number(n) => json!(n.as_u64().unwrap_or(0) + 1),
        other => panic!("no field of a receipt is {other}"),
    }
}

#[test]
fn a_receipt_changed_anywhere_fails_both_verifiers() {
    let key = ReceiptKey::ephemeral_for_tests().unwrap();
    let public = key.public_key();
    let (receipts, data) = signed(&key);
    let mut forged = Vec::new();
    let mut forged_data = Vec::new();
    let mut names = Vec::new();
    for (i, original) in wire(&receipts).into_iter().enumerate() {
        let mut paths: Vec<Vec<&str>> = Vec::new();
        for (name, value) in original.as_object().unwrap() {
            match value {
                Value::Object(answer) => {
                    paths.extend(answer.keys().map(|k| vec!["answer", k.as_str()]))
                }
                _ => paths.push(vec![name.as_str()]),
            }
        }
        assert!(paths.len() >= 11, "{paths:?}");
        for path in paths {
            let mut receipt = original.clone();
            let mut field = &mut receipt;
            for step in &path {
                field = field.get_mut(*step).unwrap();
            }
            *field = changed(field);
            let read: Receipt = serde_json::from_value(receipt.clone()).unwrap();
            assert!(
                verify(&read, &public).is_err(),
                "receipt {i} with `{}` changed verifies",
                path.join(".")
            );
            names.push(format!("receipt {i}, `{}`", path.join(".")));
            forged.push(receipt);
            forged_data.push(data[i].clone());
        }
    }
    let verdicts = python_verdicts(&public.to_pem(), &forged);
    for (verdict, name) in verdicts.iter().zip(&names) {
        assert!(verdict.is_err(), "Python accepts {name}");
    }
    // Its data digest is checked on its own too: the signature stands, the data does not.
    let mut other_data = data.clone();
    other_data[0] = Some(json!({"amount": 4000}));
    let verdicts = python_verdicts_with_data(&public.to_pem(), &wire(&receipts), &other_data);
    assert!(
        verdicts[0].is_err() && verdicts[1..].iter().all(Result::is_ok),
        "{verdicts:?}"
    );
}

/// A key as `openssl genpkey -algorithm ed25519` writes it (PKCS#8 v1), made by Python's
/// `cryptography`: its PEM, its DER in base64, its public key's PEM and its raw seed.
fn python_key() -> Value {
    let script = r#"
import base64, json
from cryptography.hazmat.primitives import serialization as s
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
k = Ed25519PrivateKey.generate()
print(json.dumps({
    "pem": k.private_bytes(s.Encoding.PEM, s.PrivateFormat.PKCS8, s.NoEncryption()).decode(),
    "der": base64.b64encode(k.private_bytes(s.Encoding.DER, s.PrivateFormat.PKCS8, s.NoEncryption())).decode(),
    "public": k.public_key().public_bytes(s.Encoding.PEM, s.PublicFormat.SubjectPublicKeyInfo).decode(),
    "seed": k.private_bytes(s.Encoding.Raw, s.PrivateFormat.Raw, s.NoEncryption()).hex(),
}))
"#;
    let out = Command::new(python())
        .args(["-c", script])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_key_file_round_trips() {
    let made = python_key();
    let dir = std::env::temp_dir().join(format!("toolnexus-receipt-keys-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pem_file = dir.join("receipts.pem");
    let der_file = dir.join("receipts.der");
    std::fs::write(&pem_file, made["pem"].as_str().unwrap()).unwrap();
    use base64::Engine as _;
    let der = base64::engine::general_purpose::STANDARD
        .decode(made["der"].as_str().unwrap())
        .unwrap();
    std::fs::write(&der_file, &der).unwrap();

    let from_pem = ReceiptKey::from_file(&pem_file).unwrap();
    let from_der = ReceiptKey::from_file(&der_file).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(from_pem.id(), from_der.id());
    // Our public key is the one Python derives from the same private key.
    let public = made["public"].as_str().unwrap();
    assert_eq!(from_pem.public_key().to_pem(), public);
    assert_eq!(PublicKey::from_pem(public).unwrap(), from_der.public_key());

    // What the loaded key signs, Python checks with the public key it made itself.
    let (receipts, _) = signed(&from_der);
    verify_with_python(public, &wire(&receipts));
    for receipt in &receipts {
        verify(receipt, &from_pem.public_key()).unwrap();
    }

    // The environment holds the PEM or the DER's base64.
    let var = "TOOLNEXUS_TEST_RECEIPT_KEY_ROUND_TRIP";
    for text in [made["pem"].as_str().unwrap(), made["der"].as_str().unwrap()] {
        // SAFETY: no other code reads this variable, and the other tests read the environment only through std, which serialises access to it.
        unsafe { std::env::set_var(var, text) };
        assert_eq!(ReceiptKey::from_env(var).unwrap().id(), from_pem.id());
    }
    // SAFETY: no other code reads this variable, and the other tests read the environment only through std, which serialises access to it.
    unsafe { std::env::remove_var(var) };
    assert!(matches!(
        ReceiptKey::from_env(var),
        Err(ReceiptError::MissingKey(_))
    ));
    assert!(matches!(
        ReceiptKey::from_file(dir.join("absent.pem")),
        Err(ReceiptError::KeyFile { .. })
    ));
    assert!(matches!(
        ReceiptKey::from_pkcs8_pem(public),
        Err(ReceiptError::InvalidKey(_))
    ));
}

#[test]
fn a_keys_debug_shows_no_key_material() {
    let made = python_key();
    let key = ReceiptKey::from_pkcs8_pem(made["pem"].as_str().unwrap()).unwrap();
    let seed = made["seed"].as_str().unwrap();
    let pem_body: String = made["pem"]
        .as_str()
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with("-----"))
        .collect();
    use base64::Engine as _;
    let raw_seed: Vec<u8> = (0..32)
        .map(|i| u8::from_str_radix(&seed[2 * i..2 * i + 2], 16).unwrap())
        .collect();
    let encodings = [
        seed.to_owned(),
        pem_body.clone(),
        pem_body[pem_body.len() - 40..].to_owned(),
        base64::engine::general_purpose::STANDARD.encode(&raw_seed),
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&raw_seed),
        format!("{raw_seed:?}"),
    ];
    for shown in [format!("{key:?}"), format!("{key:#?}")] {
        assert!(shown.contains(key.id()), "{shown}");
        for secret in &encodings {
            assert!(!shown.contains(secret.as_str()), "{shown}");
        }
    }
    // Nor does a refusal to load a key repeat what it was given.
    let cut = &pem_body[..pem_body.len() - 4];
    let broken = format!("-----BEGIN PRIVATE KEY-----\n{cut}\n-----END PRIVATE KEY-----\n");
    let refused = ReceiptKey::from_pkcs8_pem(&broken).unwrap_err();
    let shown = format!("{refused} {refused:?}");
    assert!(!shown.contains(&cut[8..40]), "{shown}");
}

/// Doubles of every magnitude, from their bit patterns (a fixed xorshift sequence, so a
/// failure replays).
fn doubles(seed: u64, count: usize) -> Vec<Value> {
    let mut state = seed;
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let value = f64::from_bits(state);
        if value.is_finite() {
            out.push(json!(value));
        }
    }
    out
}

#[test]
fn data_digests_agree_with_python_on_any_number() {
    let key = ReceiptKey::ephemeral_for_tests().unwrap();
    let data: Vec<Option<Value>> = (1..=4_u64)
        .map(|seed| {
            let mut numbers = doubles(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15), 500);
            // Short decimals and whole numbers, where the text is what people write.
            numbers.extend((0..200).map(|i| json!(f64::from(i) / 8.0 - 12.5)));
            numbers.extend((0..50).map(|i| json!(10_f64.powi(i - 25))));
            // Integers beyond 2^53, which a double would round together.
            numbers.extend((0..20).map(|i| json!((1_u64 << 53) + seed * 1000 + i)));
            numbers.extend((0..20).map(|i| json!(-(1_i64 << 60) - i as i64)));
            Some(json!({"numbers": numbers, "seed": seed}))
        })
        .collect();
    let receipts: Vec<Value> = data
        .iter()
        .enumerate()
        .map(|(i, data)| {
            let answer = Answer::ok(format!("req-{i}")).with_data(data.clone().unwrap());
            let statement = Statement::new(
                &answer.id,
                "run",
                call_digest("t", &json!({})),
                ReceiptAnswer::of(&answer),
                "ada",
                "2026-01-01T00:00:00.000Z",
                "anyone",
            );
            serde_json::to_value(key.sign(statement)).unwrap()
        })
        .collect();
    let verdicts = python_verdicts_with_data(&key.public_key().to_pem(), &receipts, &data);
    assert!(verdicts.iter().all(Result::is_ok), "{verdicts:?}");
}
