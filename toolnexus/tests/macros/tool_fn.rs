//! What a `#[tool]` fn becomes at run time: its name, description and schema, how its
//! arguments are decoded and its values injected, and how it suspends and resumes.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use toolnexus::{
    auth_required, pending, tool, Answer, Answered, Json, Tool, ToolContext, ToolResult, Toolkit,
};

thread_local! {
    // Per thread, since each test runs on its own and several execute this tool at once.
    static EXECUTIONS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Requests spend approval before proceeding
#[tool]
async fn approve_purchase(item: String, answer: Option<&Answer>) -> ToolResult {
    EXECUTIONS.with(|n| n.set(n.get() + 1));
    match answer {
        // On the resumed retry the answer is present: that is how the tool tells the calls apart.
        Some(a) if a.ok => ToolResult::ok(format!("approved: {item}")),
        Some(_) => ToolResult::error("declined"),
        None => pending!(
            kind = "approval",
            prompt = format!("Approve purchase of {item}?")
        ),
    }
}

fn toolkit() -> Toolkit {
    Toolkit::builder()
        .tool(ApprovePurchase)
        .tool(Ship)
        .tool(PlaceOrder)
        .build()
        .unwrap()
}

#[tokio::test]
async fn suspends_then_resumes_with_the_answer() {
    let before = EXECUTIONS.with(|n| n.get());
    let tk = toolkit();
    let args = json!({"item": "gpu"});
    let parked = tk
        .execute("approve_purchase", args.clone(), ToolContext::default())
        .await;
    assert!(parked.is_pending(), "{parked:?}");
    let request = ToolResult::pending_of(&parked).unwrap();
    assert_eq!(request.kind, "approval");
    assert_eq!(request.prompt, "Approve purchase of gpu?");
    assert_eq!(parked.output, "Approve purchase of gpu?");

    let answered = ToolContext::default().with_answer(Answer::ok(&request.id));
    let done = tk.execute("approve_purchase", args.clone(), answered).await;
    assert_eq!(done, ToolResult::ok("approved: gpu"));

    let declined = ToolContext::default().with_answer(Answer::decline(&request.id, "declined"));
    let refused = tk.execute("approve_purchase", args, declined).await;
    assert!(refused.is_error && !refused.is_pending());
    assert_eq!(refused.output, "declined");
    // The body runs on the test's own thread, which is what lets the counter tell tests apart.
    assert_eq!(EXECUTIONS.with(|n| n.get()) - before, 3);
}

#[test]
fn schema_has_the_decoded_parameters_only() {
    let schema = ApprovePurchase.input_schema();
    assert_eq!(
        schema,
        &json!({
            "type": "object",
            "properties": {"item": {"type": "string"}},
            "required": ["item"]
        })
    );
    assert!(
        std::ptr::eq(schema, ApprovePurchase.input_schema()),
        "built once"
    );
    assert_eq!(ApprovePurchase.name(), "approve_purchase");
    assert_eq!(
        ApprovePurchase.description(),
        "Requests spend approval before proceeding"
    );
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Address {
    /// Street and number
    street: String,
    city: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Speed {
    Standard,
    Express,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Parcel {
    to: Address,
    grams: u32,
}

///   Ships a parcel.
///
///     Express costs more.
#[tool]
async fn ship(
    #[arg(description = "What is shipped")] parcel: Parcel,
    speed: Option<Speed>,
    #[arg(description = "Gift note")] r#note: Option<String>,
    r#type: String,
) -> Json<Value> {
    Json(json!({
        "city": parcel.to.city,
        "street": parcel.to.street,
        "grams": parcel.grams,
        "speed": format!("{speed:?}"),
        "note": note,
        "type": r#type,
    }))
}

#[test]
fn schema_of_nested_optional_and_described_parameters() {
    let schema = Ship.input_schema();
    let properties = schema["properties"].as_object().unwrap();
    assert_eq!(
        properties.keys().collect::<Vec<_>>(),
        ["parcel", "speed", "note", "type"],
        "parameter order is kept"
    );
    assert_eq!(schema["required"], json!(["parcel", "type"]));
    let parcel = &properties["parcel"];
    assert_eq!(parcel["description"], "What is shipped");
    assert_eq!(parcel["type"], "object");
    assert_eq!(
        parcel["properties"]["to"]["properties"]["street"]["description"],
        "Street and number"
    );
    assert_eq!(parcel["required"], json!(["to", "grams"]));
    assert_eq!(properties["note"]["description"], "Gift note");
    let text = schema.to_string();
    assert!(
        !text.contains("$ref") && !text.contains("$defs"),
        "self-contained: {text}"
    );
    assert!(text.contains("express"), "enum values are declared: {text}");
    assert_eq!(Ship.description(), "Ships a parcel.\n\nExpress costs more.");
}

#[tokio::test]
async fn arguments_decode_into_parameters() {
    let args = json!({
        "parcel": {"to": {"street": "1 Main St", "city": "Lyon"}, "grams": 500},
        "speed": "express",
        "type": "box",
        "unexpected": true
    });
    let result = Ship.execute(args, ToolContext::default()).await;
    assert!(!result.is_error, "{result:?}");
    let output: Value = serde_json::from_str(&result.output).unwrap();
    assert_eq!(
        output,
        json!({"city": "Lyon", "street": "1 Main St", "grams": 500, "speed": "Some(Express)",
               "note": null, "type": "box"})
    );
}

#[tokio::test]
async fn bad_arguments_never_reach_the_body() {
    let before = EXECUTIONS.with(|n| n.get());
    let tk = toolkit();
    let missing = tk
        .execute("approve_purchase", json!({}), ToolContext::default())
        .await;
    assert!(missing.is_error && !missing.is_pending());
    assert_eq!(
        missing.output,
        "invalid arguments for approve_purchase: missing required argument `item`"
    );

    let wrong = tk
        .execute(
            "approve_purchase",
            json!({"item": 42}),
            ToolContext::default(),
        )
        .await;
    assert!(wrong.is_error);
    assert!(
        wrong
            .output
            .starts_with("invalid arguments for approve_purchase: `item`: "),
        "{}",
        wrong.output
    );
    assert!(
        !wrong.output.contains("line") && !wrong.output.contains("column"),
        "{}",
        wrong.output
    );

    let nested = Ship
        .execute(
            json!({"parcel": {"to": {"street": "x"}, "grams": 1}, "type": "box"}),
            ToolContext::default(),
        )
        .await;
    assert!(nested.is_error);
    assert!(
        nested.output.contains("ship") && nested.output.contains("`parcel`"),
        "{}",
        nested.output
    );

    let not_object = ApprovePurchase
        .execute(json!(["gpu"]), ToolContext::default())
        .await;
    assert_eq!(
        not_object.output,
        "invalid arguments for approve_purchase: expected a JSON object, got an array"
    );
    assert_eq!(EXECUTIONS.with(|n| n.get()), before, "the body never ran");
}

/// Always fails
#[tool(name = "explode")]
async fn explode(reason: String) -> String {
    panic!("boom: {reason}")
}

#[tokio::test]
async fn a_panic_becomes_an_error_result() {
    let result = Explode
        .execute(json!({"reason": "bad"}), ToolContext::default())
        .await;
    assert!(result.is_error && !result.is_pending());
    assert!(result.output.contains("explode"), "{}", result.output);
    assert!(result.output.contains("boom: bad"), "{}", result.output);
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Shipping {
    /// Postal code
    zip: String,
    express: Option<bool>,
}

#[derive(Debug)]
struct ShopClosed;

impl std::fmt::Display for ShopClosed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the shop is closed")
    }
}

/// Places an order, asking where to ship it
#[tool(struct_name = "PlaceOrder", name = "order")]
async fn place_order_tool(
    item: String,
    shipping: Option<Answered<Shipping>>,
    ctx: &ToolContext,
) -> Result<ToolResult, ShopClosed> {
    if item == "closed" {
        return Err(ShopClosed);
    }
    let Some(shipping) = shipping else {
        return Ok(pending!(
            kind = "input",
            prompt = format!("Where should the {item} go?"),
            answer = Shipping,
            data = json!({"item": item}),
            id = format!("order-{item}"),
            url = "https://shop.example/address",
            expires_at = "2030-01-01T00:00:00Z",
        ));
    };
    Ok(ToolResult::ok(format!(
        "{item} to {} (express: {:?}, call {:?}, answer {})",
        shipping.zip,
        shipping.express,
        ctx.call_id.as_deref(),
        shipping.answer.id
    )))
}

#[tokio::test]
async fn typed_answer_round_trip() {
    assert_eq!(PlaceOrder.name(), "order");
    let schema = PlaceOrder.input_schema();
    assert_eq!(
        schema["properties"].as_object().unwrap().len(),
        1,
        "{schema}"
    );

    let parked = PlaceOrder
        .execute(json!({"item": "gpu"}), ToolContext::default())
        .await;
    let request = ToolResult::pending_of(&parked).expect("suspended");
    assert_eq!(request.id, "order-gpu");
    assert_eq!(request.kind, "input");
    assert_eq!(request.url.as_deref(), Some("https://shop.example/address"));
    assert_eq!(request.expires_at.as_deref(), Some("2030-01-01T00:00:00Z"));
    assert_eq!(
        parked.output,
        "Where should the gpu go?\nhttps://shop.example/address"
    );
    let data = request.data.unwrap();
    assert_eq!(data["item"], "gpu", "`data` is kept next to the schema");
    assert_eq!(
        data["schema"],
        json!({
            "type": "object",
            "properties": {
                "zip": {"type": "string", "description": "Postal code"},
                "express": {"type": "boolean"}
            },
            "required": ["zip"]
        })
    );

    let answer = Answer::ok("order-gpu").with_data(json!({"zip": "75001"}));
    let ctx = ToolContext::default()
        .with_answer(answer)
        .with_call_id("call_7");
    let done = PlaceOrder.execute(json!({"item": "gpu"}), ctx).await;
    assert_eq!(
        done,
        ToolResult::ok("gpu to 75001 (express: None, call Some(\"call_7\"), answer order-gpu)")
    );

    let bad =
        ToolContext::default().with_answer(Answer::ok("order-gpu").with_data(json!({"zip": 1})));
    let refused = PlaceOrder.execute(json!({"item": "gpu"}), bad).await;
    assert!(refused.is_error && !refused.is_pending());
    assert!(
        refused.output.starts_with("invalid answer for order: "),
        "{}",
        refused.output
    );

    let closed = PlaceOrder
        .execute(json!({"item": "closed"}), ToolContext::default())
        .await;
    assert_eq!(closed, ToolResult::error("the shop is closed"));
}

#[derive(JsonSchema)]
#[allow(dead_code)]
struct NotAForm {
    tags: Vec<String>,
}

#[test]
fn an_answer_type_that_is_not_a_form_is_an_error_result() {
    let result: ToolResult = pending!(kind = "input", prompt = "Tags?", answer = NotAForm);
    assert!(result.is_error && !result.is_pending());
    assert!(
        result.output.contains("NotAForm") && result.output.contains("`tags` is an array"),
        "{}",
        result.output
    );

    let result: ToolResult = pending!(
        kind = "input",
        prompt = "Zip?",
        answer = Shipping,
        data = json!("not an object")
    );
    assert!(result.is_error && !result.is_pending());
    assert!(
        result.output.contains("`data` must be a JSON object"),
        "{}",
        result.output
    );

    let result: ToolResult = pending!(
        kind = "input",
        prompt = "Zip?",
        answer = Shipping,
        data = json!({"schema": "mine"})
    );
    assert!(result.is_error && !result.is_pending());
    assert!(
        result.output.contains("already has a `schema` key"),
        "{}",
        result.output
    );
}

#[test]
fn pending_evaluates_each_value_once_in_written_order() {
    let mut order = Vec::new();
    let mut note = |what: &'static str| {
        order.push(what);
        what
    };
    let result = pending!(
        prompt = note("prompt"),
        kind = note("kind"),
        id = note("id")
    );
    assert_eq!(order, ["prompt", "kind", "id"]);
    let request = ToolResult::pending_of(&result).unwrap();
    assert_eq!(
        (
            request.kind.as_str(),
            request.prompt.as_str(),
            request.id.as_str()
        ),
        ("kind", "prompt", "id")
    );
}

/// Reads the calendar
#[tool]
async fn calendar(
    #[arg(description = "Which day")] day: String,
    answer: Option<&Answer>,
) -> ToolResult {
    match answer {
        Some(a) if a.ok => ToolResult::ok(format!("{day}: 3 meetings")),
        Some(_) => ToolResult::error("not signed in"),
        None if day == "today" => auth_required!(url = "https://calendar.example/login"),
        None => auth_required!(
            url = "https://calendar.example/login",
            prompt = format!("Sign in to read {day}")
        ),
    }
}

#[tokio::test]
async fn auth_required_suspends_on_a_login() {
    let parked = Calendar
        .execute(json!({"day": "today"}), ToolContext::default())
        .await;
    let request = ToolResult::pending_of(&parked).unwrap();
    assert_eq!(request.kind, "authorization");
    assert_eq!(
        request.url.as_deref(),
        Some("https://calendar.example/login")
    );
    assert!(!request.prompt.is_empty(), "a default prompt");

    let parked = Calendar
        .execute(json!({"day": "monday"}), ToolContext::default())
        .await;
    let request = ToolResult::pending_of(&parked).unwrap();
    assert_eq!(request.prompt, "Sign in to read monday");

    let ctx = ToolContext::default().with_answer(Answer::ok(request.id));
    let done = Calendar.execute(json!({"day": "monday"}), ctx).await;
    assert_eq!(done.output, "monday: 3 meetings");
}

#[test]
fn declarations_for_every_provider() {
    let tk = Toolkit::builder()
        .tool(ApprovePurchase)
        .tool(Calendar)
        .tool(Ship)
        .build()
        .unwrap();
    let item_schema = json!({
        "type": "object",
        "properties": {"item": {"type": "string"}},
        "required": ["item"]
    });

    let openai = tk.to_openai();
    assert_eq!(openai.len(), 3);
    assert_eq!(
        openai[0],
        json!({"type": "function", "function": {
            "name": "approve_purchase",
            "description": "Requests spend approval before proceeding",
            "parameters": item_schema
        }})
    );
    assert_eq!(
        openai[1]["function"]["parameters"]["properties"]["day"]["description"],
        "Which day"
    );

    let anthropic = tk.to_anthropic();
    assert_eq!(
        anthropic[0],
        json!({
            "name": "approve_purchase",
            "description": "Requests spend approval before proceeding",
            "input_schema": item_schema
        })
    );

    let gemini = tk.to_gemini();
    assert_eq!(gemini.len(), 1);
    let functions = gemini[0]["functionDeclarations"].as_array().unwrap();
    assert_eq!(functions.len(), 3);
    assert_eq!(functions[0]["name"], "approve_purchase");
    assert_eq!(functions[0]["parameters"], item_schema);
    let note = &functions[2]["parameters"]["properties"]["note"];
    assert_eq!(note["type"], "string", "{note}");
    assert_eq!(note["nullable"], true, "{note}");
    assert!(!gemini[0].to_string().contains("\"null\""), "{}", gemini[0]);
}
