//! Whatever JSON a model sends as arguments, decoding it never panics: a parameter that
//! does not decode is an error result naming the tool and the parameter, and the toolkit
//! answers non-objects and unknown tools with error results too.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use proptest::prelude::*;
use serde::Deserialize;
use serde_json::{json, Value};
use toolnexus::__private::{guard, Args};
use toolnexus::{BoxFuture, NativeTool, Tool, ToolContext, ToolResult, Toolkit};

use crate::support::{block_on, json_value, object_of};

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

/// Decodes its parameters the way `#[tool]`-generated code does: one `Args::take` per
/// parameter, inside the panic guard. Counts the calls that reached the body.
struct Ship {
    reached: Arc<AtomicUsize>,
}

impl Tool for Ship {
    fn name(&self) -> &str {
        "ship"
    }
    fn description(&self) -> &str {
        "Ships a parcel"
    }
    fn input_schema(&self) -> &Value {
        static SCHEMA: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
        SCHEMA.get_or_init(|| json!({"type": "object", "properties": {}}))
    }
    fn execute(&self, args: Value, _ctx: ToolContext) -> BoxFuture<'_, ToolResult> {
        Box::pin(guard("ship", async move {
            let decoded = (|| -> Result<String, ToolResult> {
                let mut args = Args::new("ship", args)?;
                let to: Address = args.take("to")?;
                let weight: f64 = args.take("weight")?;
                let count: Option<u16> = args.take("count")?;
                let mode: Mode = args.take("mode")?;
                Ok(format!("{to:?} {weight} {count:?} {mode:?}"))
            })();
            match decoded {
                Ok(text) => {
                    self.reached.fetch_add(1, Ordering::SeqCst);
                    ToolResult::ok(text)
                }
                Err(problem) => problem,
            }
        }))
    }
}

/// `take::<T>` of every field (and of an absent one) either decodes or gives an error
/// result that names the tool and the field.
fn take_all<T: toolnexus::__private::ToolParam>(args: &Value) -> Result<(), TestCaseError> {
    let mut fields: Vec<String> = args
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    fields.push("absent".to_owned());
    for field in fields {
        let Ok(mut decoder) = Args::new("probe", args.clone()) else {
            prop_assert!(!(args.is_object() || args.is_null()));
            return Ok(());
        };
        if let Err(problem) = decoder.take::<T>(&field) {
            prop_assert!(problem.is_error && !problem.is_pending());
            prop_assert!(
                problem.output.starts_with("invalid arguments for probe: "),
                "{}",
                problem.output
            );
            prop_assert!(
                problem.output.contains(field.as_str()),
                "{}",
                problem.output
            );
            prop_assert!(!problem.output.contains(" at line "), "{}", problem.output);
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
        take_all::<String>(&args)?;
        take_all::<i32>(&args)?;
        take_all::<u8>(&args)?;
        take_all::<f32>(&args)?;
        take_all::<bool>(&args)?;
        take_all::<char>(&args)?;
        take_all::<Option<u64>>(&args)?;
        take_all::<Vec<i16>>(&args)?;
        take_all::<(String, u32)>(&args)?;
        take_all::<BTreeMap<String, Vec<bool>>>(&args)?;
        take_all::<Address>(&args)?;
        take_all::<Mode>(&args)?;
        take_all::<Value>(&args)?;
        take_all::<()>(&args)?;
    }

    #[test]
    fn executing_any_arguments_never_panics(args in arguments()) {
        let reached = Arc::new(AtomicUsize::new(0));
        let echo = NativeTool::of("echo", "Echoes", json!({"type": "object"}),
            |args: Value, _ctx: ToolContext| async move { args.to_string() });
        let tk = Toolkit::builder()
            .tool(echo)
            .tool(Ship { reached: reached.clone() })
            .build()
            .unwrap();
        let is_object = args.is_object() || args.is_null();

        let shipped = block_on(tk.execute("ship", args.clone(), ToolContext::default()));
        prop_assert!(!shipped.is_pending());
        prop_assert!(!shipped.output.contains("panicked"), "{}", shipped.output);
        if shipped.is_error {
            prop_assert_eq!(reached.load(Ordering::SeqCst), 0, "bad arguments never reach the body");
            prop_assert!(shipped.output.starts_with("invalid arguments for ship: "), "{}", shipped.output);
        }

        let echoed = block_on(tk.execute("echo", args.clone(), ToolContext::default()));
        prop_assert_eq!(echoed.is_error, !is_object, "{}", echoed.output);

        let unknown = block_on(tk.execute("nope", args, ToolContext::default()));
        prop_assert!(unknown.is_error && unknown.output.starts_with("unknown tool `nope`"));
    }
}
