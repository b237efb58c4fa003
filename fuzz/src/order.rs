//! A tool whose arguments decode the way `#[tool]`-generated code decodes them, and every
//! field decoder on its own.

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;
use toolnexus::__private::{guard, Args};
use toolnexus::{BoxFuture, Tool, ToolContext, ToolResult};

#[derive(Debug, Deserialize, toolnexus::schemars::JsonSchema)]
#[schemars(crate = "toolnexus::schemars")]
#[allow(dead_code)]
pub struct Shipping {
    pub address: String,
    pub express: Option<bool>,
    pub notes: BTreeMap<String, i32>,
}

#[derive(Debug, Deserialize, toolnexus::schemars::JsonSchema)]
#[schemars(crate = "toolnexus::schemars")]
#[serde(rename_all = "lowercase")]
#[allow(dead_code)]
pub enum Priority {
    Low,
    High,
    Custom(u8),
}

/// Decodes its arguments field by field the way `#[tool]`-generated code does (with
/// [`Args`]), inside the same panic guard.
pub struct Order;

impl Tool for Order {
    fn name(&self) -> &str {
        "order"
    }
    fn description(&self) -> &str {
        "Orders an item"
    }
    fn input_schema(&self) -> &Value {
        static SCHEMA: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
        SCHEMA.get_or_init(|| serde_json::json!({"type": "object", "properties": {}}))
    }
    fn execute(&self, args: Value, _ctx: ToolContext) -> BoxFuture<'_, ToolResult> {
        Box::pin(guard("order", async move {
            match decode_order(args) {
                Ok(text) => ToolResult::ok(text),
                Err(problem) => problem,
            }
        }))
    }
}

fn decode_order(args: Value) -> Result<String, ToolResult> {
    let mut args = Args::new("order", args)?;
    let item: String = args.take("item")?;
    let qty: Option<u32> = args.take("qty")?;
    let price: f64 = args.take("price")?;
    let tags: Vec<String> = args.take("tags")?;
    let shipping: Option<Shipping> = args.take("shipping")?;
    let priority: Priority = args.take("priority")?;
    let extra: Value = args.take("extra")?;
    Ok(format!(
        "{item} {qty:?} {price} {tags:?} {shipping:?} {priority:?} {extra}"
    ))
}

/// Every field decoder on its own, as `Args::take` is called by generated code.
pub fn take_each(args: &Value) {
    fn one<T: DeserializeOwned + toolnexus::schemars::JsonSchema>(args: &Value, field: &str) {
        if let Ok(mut a) = Args::new("fuzz", args.clone()) {
            if let Err(problem) = a.take::<T>(field) {
                assert!(problem.is_error && !problem.is_pending());
                assert!(problem.output.starts_with("invalid arguments for fuzz: "));
            }
        }
    }
    let fields: Vec<String> = match args {
        Value::Object(map) => map.keys().cloned().chain(["absent".to_owned()]).collect(),
        _ => vec!["absent".to_owned()],
    };
    for f in &fields {
        one::<String>(args, f);
        one::<i64>(args, f);
        one::<u8>(args, f);
        one::<f32>(args, f);
        one::<bool>(args, f);
        one::<char>(args, f);
        one::<Option<u64>>(args, f);
        one::<Vec<i16>>(args, f);
        one::<(String, u32)>(args, f);
        one::<BTreeMap<String, Vec<bool>>>(args, f);
        one::<Shipping>(args, f);
        one::<Priority>(args, f);
        one::<Value>(args, f);
        one::<()>(args, f);
    }
}
