//! Whatever JSON a model sends as arguments, decoding it never panics: a parameter that
//! does not decode is an error result naming the tool and the parameter, and the toolkit
//! answers non-objects and unknown tools with error results too.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::prelude::*;
use serde::Deserialize;
use serde_json::{json, Value};
use toolnexus::{tool, NativeTool, ToolContext, Toolkit};

use crate::strategies::{json_value, object_of};
use crate::support::block_on;

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[allow(dead_code)]
struct Address {
    street: String,
    zip: Option<u32>,
    tags: Vec<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
enum Mode {
    Fast,
    Careful { retries: u8 },
    Other(String),
}

/// Calls that reached the body of `ship`.
static SHIP_REACHED: AtomicUsize = AtomicUsize::new(0);

/// Ships a parcel
#[tool]
async fn ship(to: Address, weight: f64, count: Option<u16>, mode: Mode) -> String {
    SHIP_REACHED.fetch_add(1, Ordering::SeqCst);
    format!("{to:?} {weight} {count:?} {mode:?}")
}

/// One tool per probed type, each taking a single `value` of that type.
macro_rules! probes {
    ($($probe:ident, $tool:ident: $ty:ty;)*) => {
        $(
            /// Takes one value of the probed type
            #[tool]
            async fn $probe(value: $ty) -> String {
                format!("{value:?}")
            }
        )*

        fn probes() -> Toolkit {
            Toolkit::builder()$(.tool($tool))*.build().unwrap()
        }
    };
}

probes! {
    probe_string, ProbeString: String;
    probe_i32, ProbeI32: i32;
    probe_u8, ProbeU8: u8;
    probe_f32, ProbeF32: f32;
    probe_bool, ProbeBool: bool;
    probe_char, ProbeChar: char;
    probe_option, ProbeOption: Option<u64>;
    probe_vec, ProbeVec: Vec<i16>;
    probe_tuple, ProbeTuple: (String, u32);
    probe_map, ProbeMap: BTreeMap<String, Vec<bool>>;
    probe_address, ProbeAddress: Address;
    probe_mode, ProbeMode: Mode;
    probe_value, ProbeValue: Value;
    probe_unit, ProbeUnit: ();
}

/// Every field of `args` (and an absent one), given to every probe, either decodes or
/// gives an error result that names the tool and the parameter.
fn probe_all(args: &Value) -> Result<(), TestCaseError> {
    let tk = probes();
    let mut values: Vec<Option<&Value>> = args
        .as_object()
        .map(|m| m.values().map(Some).collect())
        .unwrap_or_default();
    values.push(None);
    for tool in tk.names() {
        for value in &values {
            let call = match value {
                Some(value) => json!({ "value": value }),
                None => json!({}),
            };
            let result = block_on(tk.execute(tool, call, ToolContext::default()));
            prop_assert!(!result.is_pending());
            prop_assert!(!result.output.contains("panicked"), "{}", result.output);
            if result.is_error {
                let prefix = format!("invalid arguments for {tool}: ");
                prop_assert!(result.output.starts_with(&prefix), "{}", result.output);
                prop_assert!(result.output.contains("`value`"), "{}", result.output);
                prop_assert!(!result.output.contains(" at line "), "{}", result.output);
            }
        }
    }
    Ok(())
}

/// Arguments as models send them: mostly objects with the expected keys, holding anything.
fn arguments() -> impl Strategy<Value = Value> {
    let expected = (
        json_value(),
        json_value(),
        json_value(),
        prop_oneof![json_value(), Just(json!("fast")), Just(json!({"careful": {"retries": 3}}))],
    )
        .prop_map(|(to, weight, count, mode)| {
            json!({"to": to, "weight": weight, "count": count, "mode": mode})
        });
    prop_oneof![expected, object_of(json_value()), json_value()]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn taking_any_argument_never_panics(args in arguments()) {
        probe_all(&args)?;
    }

    #[test]
    fn executing_any_arguments_never_panics(args in arguments()) {
        let echo = NativeTool::of("echo", "Echoes", json!({"type": "object"}),
            |args: Value, _ctx: ToolContext| async move { args.to_string() });
        let tk = Toolkit::builder()
            .tool(echo)
            .tool(Ship)
            .build()
            .unwrap();
        let is_object = args.is_object() || args.is_null();

        let reached_before = SHIP_REACHED.load(Ordering::SeqCst);
        let shipped = block_on(tk.execute("ship", args.clone(), ToolContext::default()));
        prop_assert!(!shipped.is_pending());
        prop_assert!(!shipped.output.contains("panicked"), "{}", shipped.output);
        if shipped.is_error {
            prop_assert_eq!(
                SHIP_REACHED.load(Ordering::SeqCst),
                reached_before,
                "bad arguments never reach the body"
            );
            prop_assert!(shipped.output.starts_with("invalid arguments for ship: "), "{}", shipped.output);
        }

        let echoed = block_on(tk.execute("echo", args.clone(), ToolContext::default()));
        prop_assert_eq!(echoed.is_error, !is_object, "{}", echoed.output);

        let unknown = block_on(tk.execute("nope", args, ToolContext::default()));
        prop_assert!(unknown.is_error && unknown.output.starts_with("unknown tool `nope`"));
    }
}
