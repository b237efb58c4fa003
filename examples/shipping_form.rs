//! A shop whose tools share its stock (`#[toolbox]`), and an order that asks the human for
//! a shipping address through a typed form (`pending!(…, answer = Shipping)`).
//!
//! The model checks the stock, then orders; the `order` tool suspends with the form schema
//! of `Shipping`; the host's `wait_for` renders that schema, whatever its fields, and fills
//! it in; the tool re-runs with the address decoded into a `Shipping`.
//!
//! ```sh
//! cargo run --example shipping_form                                 # embedded stub, asks each field
//! TOOLNEXUS_AUTO_ANSWER=approve cargo run --example shipping_form   # fills in sample values
//! TOOLNEXUS_AUTO_ANSWER=decline cargo run --example shipping_form   # refuses the form
//! OPENAI_API_KEY=sk-… cargo run --example shipping_form             # a real model
//! ```
//! Also `TOOLNEXUS_BASE_URL`, `TOOLNEXUS_MODEL` and `TOOLNEXUS_STYLE=openai|anthropic|responses|gemini`.
//! The fields are read from standard input, a terminal or a pipe; when it is closed
//! (Ctrl-D) before the form is complete, the form is declined.

mod export;
mod failure;
mod support;

use failure::Failure;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Map, Value};
use toolnexus::testing::{RecordedRequest, Reply};
use toolnexus::{
    pending, toolbox, Answer, Answered, LlmClient, Request, ToolResult, Toolbox, Toolkit,
};

use support::Answering;

/// Where an order goes.
#[derive(Debug, Deserialize, JsonSchema)]
struct Shipping {
    /// The recipient's city
    city: String,
    /// Postal code
    zip: String,
    /// Next-day delivery
    express: bool,
}

/// The shop, its stock and the orders placed. (Public, with [`Shop::open`] and [`script`],
/// for the example's test in `examples/core/tests`.)
pub struct Shop {
    stock: Mutex<HashMap<String, u32>>,
    orders: Mutex<Vec<String>>,
}

#[toolbox]
impl Shop {
    /// How many of an item are in stock
    #[tool]
    async fn stock(&self, #[arg(description = "The item, e.g. gpu")] sku: String) -> String {
        format!("{} of {sku} in stock", self.left(&sku))
    }

    /// Orders items; asks the customer where to ship them
    #[tool]
    async fn order(
        &self,
        sku: String,
        qty: u32,
        shipping: Option<Answered<Shipping>>,
    ) -> ToolResult {
        if self.left(&sku) < qty {
            return ToolResult::error(format!("only {} of {sku} left", self.left(&sku)));
        }
        let Some(to) = shipping else {
            return pending!(
                kind = "input",
                prompt = format!("Where should the {} go?", support::items(qty, &sku)),
                answer = Shipping
            );
        };
        // Only now, with the address in hand, does the stock change: checked again under
        // the lock, since another call may have taken some while the human typed.
        let mut stock = self.stock.lock().unwrap_or_else(|e| e.into_inner());
        let have = stock.entry(sku.clone()).or_default();
        if *have < qty {
            return ToolResult::error(format!("only {have} of {sku} left"));
        }
        *have -= qty;
        let mut orders = self.orders.lock().unwrap_or_else(|e| e.into_inner());
        let speed = if to.express { ", express" } else { "" };
        orders.push(format!(
            "{} to {} {}{speed}",
            support::items(qty, &sku),
            to.zip,
            to.city
        ));
        ToolResult::ok(format!(
            "order #{}: {}",
            orders.len(),
            orders[orders.len() - 1]
        ))
    }

    /// The shop as the example opens it: three gpus in stock, no orders.
    pub fn open() -> Arc<Shop> {
        Arc::new(Shop {
            stock: Mutex::new(HashMap::from([("gpu".to_owned(), 3)])),
            orders: Mutex::new(Vec::new()),
        })
    }

    /// How many of `sku` are left.
    pub fn left(&self, sku: &str) -> u32 {
        let stock = self.stock.lock().unwrap_or_else(|e| e.into_inner());
        stock.get(sku).copied().unwrap_or(0)
    }
}

/// What the embedded stub's model does: check the stock, order, report.
pub fn script(req: &RecordedRequest) -> Reply {
    match support::last_tool_output(req) {
        None => Reply::tool_call("call_1", "stock", json!({"sku": "gpu"})),
        Some(out) if out.ends_with("in stock") => {
            Reply::tool_call("call_2", "order", json!({"sku": "gpu", "qty": 2}))
        }
        Some(out) if out.starts_with("order #") => {
            Reply::text(format!("Done: {out}. Anything else?"))
        }
        Some(out) => Reply::text(format!("I could not place the order: {out}")),
    }
}

/// Prints the form a request carries, one field a line with its type.
fn render(request: &Request, form: &Map<String, Value>) {
    println!(
        "== {} (request {}, {})",
        request.prompt, request.id, request.kind
    );
    let required = form["required"].as_array().cloned().unwrap_or_default();
    for (name, field) in form["properties"].as_object().into_iter().flatten() {
        let kind = match field.get("enum").and_then(Value::as_array) {
            Some(values) => format!("one of {}", Value::Array(values.clone())),
            None => field["type"].as_str().unwrap_or("any").to_owned(),
        };
        let need = if required.contains(&json!(name)) {
            "required"
        } else {
            "optional"
        };
        match field["description"].as_str() {
            Some(about) => println!("   {name} ({kind}, {need}): {about}"),
            None => println!("   {name} ({kind}, {need})"),
        }
    }
}

/// A plausible value for a field, for runs nobody answers.
fn sample(name: &str, field: &Value) -> Value {
    if let Some(first) = field.get("enum").and_then(|e| e.get(0)) {
        return first.clone();
    }
    match (field["type"].as_str(), name) {
        (Some("string"), "city") => json!("Paris"),
        (Some("string"), "zip") => json!("75001"),
        (Some("string"), _) => json!("example"),
        (Some("integer"), _) => json!(1),
        (Some("number"), _) => json!(1.5),
        (Some("boolean"), _) => json!(false),
        _ => Value::Null,
    }
}

/// What the human typed for a field, as the field's JSON type; `Err` says what is expected.
fn parse(text: &str, field: &Value) -> Result<Value, String> {
    if let Some(values) = field.get("enum").and_then(Value::as_array) {
        return values
            .iter()
            .find(|v| v.as_str() == Some(text))
            .cloned()
            .ok_or_else(|| format!("one of {}", Value::Array(values.clone())));
    }
    match field["type"].as_str() {
        Some("boolean") => match text {
            "y" | "yes" | "true" => Ok(json!(true)),
            "n" | "no" | "false" => Ok(json!(false)),
            _ => Err("yes or no".to_owned()),
        },
        Some("integer") => text
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| "a whole number".to_owned()),
        Some("number") => text
            .parse::<f64>()
            .map(Value::from)
            .map_err(|_| "a number".to_owned()),
        _ if text.is_empty() => Err("some text".to_owned()),
        _ => Ok(json!(text)),
    }
}

/// Asks each field on standard input until it parses; an optional field may be left empty.
/// `None` when standard input closes before the form is complete.
async fn ask(form: &Map<String, Value>) -> Option<Map<String, Value>> {
    let required = form["required"].as_array().cloned().unwrap_or_default();
    let mut filled = Map::new();
    for (name, field) in form["properties"].as_object().into_iter().flatten() {
        loop {
            let line = support::read_line(&format!("   {name}: ")).await?;
            let text = line.trim();
            if text.is_empty() && !required.contains(&json!(name)) {
                break;
            }
            match parse(text, field) {
                Ok(value) => {
                    filled.insert(name.clone(), value);
                    break;
                }
                Err(expected) => println!("   expected {expected}"),
            }
        }
    }
    Some(filled)
}

/// The host's side of a suspension: render the form, fill it in, answer with the values.
async fn fill_in(request: Request, answering: Answering) -> Answer {
    let Some(Value::Object(form)) = request.data.as_ref().and_then(|d| d.get("schema")).cloned()
    else {
        println!("   the request carries no form; declining");
        return Answer::decline(request.id, "no form to fill in");
    };
    render(&request, &form);
    match answering {
        Answering::Decline => {
            println!("   TOOLNEXUS_AUTO_ANSWER=decline: declining the form");
            Answer::decline(request.id, "declined")
        }
        Answering::Approve => {
            println!("   TOOLNEXUS_AUTO_ANSWER=approve: filling in sample values");
            let properties = form["properties"].as_object().cloned().unwrap_or_default();
            let values: Map<String, Value> = properties
                .iter()
                .map(|(name, field)| (name.clone(), sample(name, field)))
                .collect();
            for (name, value) in &values {
                println!("   {name} = {value}");
            }
            Answer::ok(request.id).with_data(Value::Object(values))
        }
        Answering::Ask => match ask(&form).await {
            Some(values) => Answer::ok(request.id).with_data(Value::Object(values)),
            None => {
                println!("   standard input is closed: declining the form");
                Answer::decline(request.id, "declined")
            }
        },
    }
}

#[tokio::main]
async fn main() -> Result<(), Failure> {
    let _export = export::start()?;
    let shop = Shop::open();
    let tk = Toolkit::builder()
        .tools(shop.clone().into_tools())
        .build()?;

    let answering = Answering::from_env()?;
    // The model: a real endpoint from the environment, or the embedded scripted stub.
    let target = support::target(script).await?;
    let client = LlmClient::builder()
        .base_url(&target.base_url)
        .style(target.style)
        .model(&target.model)
        .api_key(&target.api_key)
        .system_prompt(
            "You sell hardware. Check the stock with `stock`, then place the order with \
             `order`; it asks the customer for the shipping address itself.",
        )
        .wait_for(move |request: Request| fill_in(request, answering))
        .build()?;

    let result = client.run("Please send me 2 gpus.", &tk).await?;
    println!("== the run");
    for call in &result.tool_calls {
        println!("   {}({}) -> {}", call.name, call.args, call.output);
    }
    println!("final answer: {}", result.text);
    let orders = shop
        .orders
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    println!(
        "shop: {} left, orders: {orders:?}",
        support::items(shop.left("gpu"), "gpu")
    );
    Ok(())
}
