//! Unit tests of the toolkit: registration and names, declarations in every format, and
//! execution errors (unknown tools, bad arguments, panics).

use serde_json::{json, Value};

use crate::tool::BoxFuture;
use crate::{NativeTool, Tool, ToolContext, ToolResult, Toolkit, ToolkitError};

/// A hand-written tool whose `execute` panics before returning a future.
struct PanicsEagerly;

impl Tool for PanicsEagerly {
    fn name(&self) -> &str {
        "eager"
    }
    fn description(&self) -> &str {
        "Panics while starting"
    }
    fn input_schema(&self) -> &Value {
        static SCHEMA: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
        SCHEMA.get_or_init(|| json!({"type": "object"}))
    }
    fn execute(&self, _args: Value, _ctx: ToolContext) -> BoxFuture<'_, ToolResult> {
        panic!("no future for you")
    }
}

#[tokio::test]
async fn a_tool_panicking_before_its_future_is_an_error_result() {
    let tk = Toolkit::builder().tool(PanicsEagerly).build().unwrap();
    let result = tk.execute("eager", json!({}), ToolContext::default()).await;
    assert!(result.is_error && !result.is_pending());
    assert_eq!(
        result.output,
        "tool eager failed: panicked: no future for you"
    );
}

/// A hand-written tool whose future panics when polled.
struct PanicsLater;

impl Tool for PanicsLater {
    fn name(&self) -> &str {
        "late"
    }
    fn description(&self) -> &str {
        "Panics while running"
    }
    fn input_schema(&self) -> &Value {
        static SCHEMA: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
        SCHEMA.get_or_init(|| json!({"type": "object"}))
    }
    fn execute(&self, _args: Value, _ctx: ToolContext) -> BoxFuture<'_, ToolResult> {
        Box::pin(async { panic!("gave up halfway") })
    }
}

#[tokio::test]
async fn a_tool_lent_by_a_toolkit_is_guarded_like_its_calls() {
    let tk = Toolkit::builder()
        .tool(PanicsEagerly)
        .tool(PanicsLater)
        .build()
        .unwrap();
    let eager = tk.get("eager").unwrap();
    let result = eager.execute(json!({}), ToolContext::default()).await;
    assert!(result.is_error);
    assert_eq!(
        result.output,
        "tool eager failed: panicked: no future for you"
    );
    let late = &tk.tools()[1];
    assert_eq!(late.name(), "late");
    let result = late.execute(json!({}), ToolContext::default()).await;
    assert_eq!(result.output, "tool late failed: panicked: gave up halfway");
    let via_toolkit = tk.execute("late", json!({}), ToolContext::default()).await;
    assert_eq!(via_toolkit, result);
}

// Tools generated inside the runtime crate itself: `::toolnexus` resolves through
// `extern crate self as toolnexus`.

/// Approves purchases
#[crate::tool(name = "approve")]
async fn first(item: String) -> String {
    item
}

/// Approves purchases too
#[crate::tool(name = "approve")]
async fn second(item: String) -> String {
    item
}

#[test]
fn two_tools_with_one_name_are_refused() {
    let err = Toolkit::builder()
        .tool(First)
        .tool(Second)
        .build()
        .unwrap_err();
    assert_eq!(err, ToolkitError::DuplicateName("approve".into()));
    assert!(err.to_string().contains("`approve`"), "{err}");
}

#[test]
fn names_that_clash_once_sanitized_are_refused() {
    let schema = json!({"type": "object"});
    let spaced = NativeTool::of("get weather", "Weather", schema.clone(), |_, _| async {
        ""
    });
    let snake = NativeTool::of("get_weather", "Weather", schema, |_, _| async { "" });
    let err = Toolkit::builder()
        .tool(spaced)
        .tool(snake)
        .build()
        .unwrap_err();
    assert_eq!(err, ToolkitError::DuplicateName("get_weather".into()));
}

#[tokio::test]
async fn generated_tools_run_inside_the_runtime_crate() {
    let tk = Toolkit::builder().tool(First).build().unwrap();
    let result = tk
        .execute("approve", json!({"item": "gpu"}), ToolContext::default())
        .await;
    assert_eq!(result, ToolResult::ok("gpu"));
}

/// Lists the days it will rain
#[crate::tool(output_schema)]
async fn rainy_days(city: String) -> Vec<String> {
    vec![city]
}

/// A raw schema with everything normalizing takes out: `$schema`, `title`, a `$ref`.
fn raw_place_schema() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Args",
        "type": "object",
        "properties": {"place": {"$ref": "#/$defs/Place"}},
        "required": ["place"],
        "$defs": {"Place": {"title": "Place", "type": "string"}}
    })
}

/// A tool named as no provider accepts, with a raw schema, and one declaring its output.
fn weather_and_rain() -> Toolkit {
    let weather = NativeTool::of("get weather", "Weather", raw_place_schema(), |_, _| async {
        "sunny"
    });
    Toolkit::builder()
        .tool(weather)
        .tool(RainyDays)
        .build()
        .unwrap()
}

#[test]
fn declarations_carry_the_sanitized_name_and_the_normalized_schema() {
    let tk = weather_and_rain();
    let declared: Vec<_> = tk.declarations().collect();
    assert_eq!(tk.declarations().len(), 2);
    assert_eq!(declared[0].name, "get_weather");
    assert_eq!(declared[0].description, "Weather");
    assert_eq!(
        declared[0].input_schema,
        &json!({
            "type": "object",
            "properties": {"place": {"type": "string"}},
            "required": ["place"]
        })
    );
    assert_eq!(declared[0].output_schema, None);
    assert_eq!(declared[1].name, "rainy_days");
    assert!(declared[1].output_schema.is_some());
    assert_eq!(declared[1].output_schema, RainyDays.output_schema());
}

#[test]
fn every_export_and_request_body_is_made_of_the_declarations() {
    let tk = weather_and_rain();
    let (openai, anthropic, gemini) = (tk.to_openai(), tk.to_anthropic(), tk.to_gemini());
    for (i, d) in tk.declarations().enumerate() {
        assert_eq!(openai[i]["function"]["name"], d.name);
        assert_eq!(&openai[i]["function"]["parameters"], d.input_schema);
        assert_eq!(anthropic[i]["name"], d.name);
        assert_eq!(&anthropic[i]["input_schema"], d.input_schema);
        assert_eq!(gemini[0]["functionDeclarations"][i]["name"], d.name);
    }
    for style in crate::Style::ALL {
        let body = tk
            .declarations_json(style)
            .expect("tools are declared")
            .get();
        assert!(body.contains("\"get_weather\""), "{style}: {body}");
        assert!(!body.contains("get weather"), "{style}: {body}");
        assert!(!body.contains("$schema"), "{style}: {body}");
    }
}

#[tokio::test]
async fn a_tool_that_asks_the_same_question_again_ends_unresolved_with_rounds_or_without() {
    // A tool that leaves `id` out draws a fresh one on every run: the question is the same.
    let stubborn = NativeTool::of(
        "stubborn",
        "Asks the same question again whatever the answer",
        json!({"type": "object"}),
        |_, _| async { ToolResult::pending(crate::Request::new("input", "Your name?")) },
    );
    let tk = Toolkit::builder().tool(stubborn).build().unwrap();
    let asked = tk
        .execute("stubborn", json!({}), ToolContext::default())
        .await;
    let request = ToolResult::pending_of(&asked).unwrap();
    let ada = crate::Answer::ok(&request.id).with_data(json!({"name": "Ada"}));
    let ctx = ToolContext::default;
    let rounds = tk
        .settle_round("stubborn", json!({}), &request, ada.clone(), ctx())
        .await;
    let once = tk.settle("stubborn", json!({}), &request, ada, ctx()).await;
    for settled in [rounds, once] {
        assert!(settled.is_error);
        assert_eq!(settled.output, "unresolved: Your name?");
        assert_eq!(ToolResult::pending_of(&settled), None);
    }
}

#[tokio::test]
async fn a_gate_settled_by_the_toolkit_runs_under_its_approvals_receipts() {
    use crate::receipt::{ReceiptAnswer, Statement};
    use crate::{Answer, Approval, Receipt};

    let seen = NativeTool::of(
        "pay",
        "Pays",
        json!({"type": "object"}),
        |_args, ctx| async move { format!("{} receipts", ctx.receipts().len()) },
    );
    let tk = Toolkit::builder()
        .tool(seen)
        .approval(Approval::tools(["pay"]))
        .build()
        .unwrap();
    let args = json!({});
    let asked = tk.approval_request("pay", &args, "run/call").unwrap();
    let mut yes = Answer::ok(&asked.id);
    let statement = Statement::new(
        &asked.id,
        "run",
        crate::call_digest("pay", &args),
        ReceiptAnswer::of(&yes),
        "ada",
        "2026-01-01T00:00:00.000Z",
        "anyone",
    );
    yes.receipts = vec![Receipt::new(statement, "ed25519:test", "sig")];
    let done = tk
        .settle("pay", args, &asked, yes, ToolContext::default())
        .await;
    assert_eq!(done.output, "1 receipts");
}
