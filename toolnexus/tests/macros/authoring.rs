//! Writing tools: plain `fn`s, returning any serializable value, per-parameter defaults,
//! wire names and schemars attributes, and a declared output schema.

use std::fmt;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{json, Value};
use toolnexus::{tool, toolbox, NativeTool, Tool, ToolContext, ToolResult, Toolbox, Toolkit};

async fn call(tool: &impl Tool, args: Value) -> ToolResult {
    tool.execute(args, ToolContext::default()).await
}

/// Adds two numbers, without any `.await`
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

struct Counter;

#[toolbox]
impl Counter {
    /// Doubles a number, as a plain method
    #[tool]
    fn double(&self, n: i64) -> i64 {
        n * 2
    }
}

#[tokio::test]
async fn a_plain_fn_is_a_tool() {
    assert_eq!(
        call(&Add, json!({"a": 2, "b": 3})).await,
        ToolResult::ok("5")
    );
    assert_eq!(add(1, 1), 2, "the fn stays callable as written");
    let tk = Toolkit::builder()
        .tools(Arc::new(Counter).into_tools())
        .build()
        .unwrap();
    let doubled = tk
        .execute("double", json!({"n": 21}), ToolContext::default())
        .await;
    assert_eq!(doubled.output, "42");
}

#[derive(Debug, Serialize, JsonSchema)]
struct Forecast {
    city: String,
    rain: bool,
}

#[derive(Debug)]
struct Unknown(String);

impl fmt::Display for Unknown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "no forecast for {}", self.0)
    }
}

// `Forecast` is the returned type's name, so the tool struct takes another.
/// Forecasts the weather
#[tool(output_schema, struct_name = "GetForecast")]
async fn forecast(city: String) -> Result<Forecast, Unknown> {
    if city.is_empty() {
        return Err(Unknown(city));
    }
    Ok(Forecast { city, rain: true })
}

/// Lists the cities it knows
#[tool]
async fn cities() -> Vec<&'static str> {
    vec!["Paris", "Lyon"]
}

/// Greets, as plain text
#[tool]
async fn greet(name: String) -> String {
    format!("hello {name}")
}

/// Greets, or fails with a message
#[tool]
async fn strict_greet(name: String) -> Result<String, Unknown> {
    if name.is_empty() {
        Err(Unknown(name))
    } else {
        Ok(name)
    }
}

#[tokio::test]
async fn a_serializable_value_is_rendered_as_json_and_text_stays_text() {
    let ok = call(&GetForecast, json!({"city": "Paris"})).await;
    assert_eq!(ok, ToolResult::ok(r#"{"city":"Paris","rain":true}"#));
    let err = call(&GetForecast, json!({"city": ""})).await;
    assert_eq!(err, ToolResult::error("no forecast for "));
    assert_eq!(call(&Cities, json!({})).await.output, r#"["Paris","Lyon"]"#);
    assert_eq!(
        call(&Greet, json!({"name": "Ada"})).await,
        ToolResult::ok("hello Ada"),
        "a String is plain text, not a JSON string"
    );
    assert_eq!(
        call(&StrictGreet, json!({"name": "Ada"})).await.output,
        "Ada"
    );
    assert_eq!(
        call(&StrictGreet, json!({"name": ""})).await,
        ToolResult::error("no forecast for ")
    );
}

#[tokio::test]
async fn an_output_schema_is_declared_on_request() {
    let schema = GetForecast.output_schema().expect("declared");
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["properties"]["rain"]["type"], "boolean");
    assert_eq!(schema["required"], json!(["city", "rain"]));
    assert_eq!(Greet.output_schema(), None, "only on request");
    let native = NativeTool::of("n", "d", json!({"type": "object"}), |_, _| async { "" });
    assert_eq!(native.output_schema(), None);
    let shared: Arc<dyn Tool> = Arc::new(GetForecast);
    assert_eq!(shared.output_schema(), Some(schema));
}

const DEFAULT_DAYS: u8 = 3;

/// Weather for the next days
#[tool]
async fn outlook(
    #[arg(rename = "cityName", description = "The city")] city: String,
    #[arg(default = "metric")] units: String,
    #[arg(default = DEFAULT_DAYS)]
    #[schemars(range(min = 1, max = 10))]
    days: u8,
    #[schemars(length(max = 5), description = "A short note")] note: Option<String>,
) -> String {
    format!("{city} {units} {days} {}", note.unwrap_or_default())
}

#[tokio::test]
async fn defaults_wire_names_and_schemars_attributes_shape_the_schema() {
    let schema = Outlook.input_schema();
    let props = &schema["properties"];
    assert_eq!(schema["required"], json!(["cityName"]));
    assert_eq!(props["cityName"]["description"], "The city");
    assert!(props.get("city").is_none());
    assert_eq!(props["units"]["default"], "metric");
    assert_eq!(props["days"]["default"], 3);
    assert_eq!(props["days"]["minimum"], 1);
    assert_eq!(props["days"]["maximum"], 10);
    assert_eq!(props["note"]["maxLength"], 5);
    assert_eq!(props["note"]["description"], "A short note");
}

#[tokio::test]
async fn defaults_fill_missing_arguments_and_wire_names_are_what_errors_say() {
    let out = call(&Outlook, json!({"cityName": "Paris"})).await;
    assert_eq!(out, ToolResult::ok("Paris metric 3 "));
    let out = call(
        &Outlook,
        json!({"cityName": "Lyon", "units": null, "days": 5, "note": "x"}),
    )
    .await;
    assert_eq!(out, ToolResult::ok("Lyon metric 5 x"));
    let missing = call(&Outlook, json!({"city": "Paris"})).await;
    assert_eq!(
        missing,
        ToolResult::error("invalid arguments for outlook: missing required argument `cityName`")
    );
    let wrong = call(&Outlook, json!({"cityName": "Paris", "days": "many"})).await;
    assert!(
        wrong.is_error
            && wrong
                .output
                .starts_with("invalid arguments for outlook: `days`: "),
        "{}",
        wrong.output
    );
}
