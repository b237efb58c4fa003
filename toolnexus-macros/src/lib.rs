//! Procedural macros for toolnexus: [`#[tool]`](macro@tool) and [`#[toolbox]`](macro@toolbox),
//! and the engines of `pending!` and `auth_required!`. Depend on `toolnexus`, which
//! re-exports them at the same version; the code they generate names the runtime crate,
//! never this one.
//!
//! The guide to writing tools is the documentation of [`#[tool]`](macro@tool): its options,
//! parameters and injected values, return types, suspending, typed answers, and approvals,
//! declared on a tool or named on a toolkit.

mod attr;
mod diag;
mod named;
mod runtime;
mod suspend;
mod template;
mod tool;
mod toolbox;

use proc_macro::TokenStream;

/// Turns a fn (`async` or not) into a tool a model can call.
///
/// ```
/// use toolnexus::{pending, tool, Answer, Tool, ToolResult};
///
/// /// Requests spend approval before proceeding
/// #[tool]
/// async fn approve_purchase(item: String, answer: Option<&Answer>) -> ToolResult {
///     match answer {
///         Some(a) if a.ok => ToolResult::ok(format!("approved: {item}")),
///         // Reached only through a direct `Toolkit::execute`: under `LlmClient` a refusal
///         // never re-runs the tool, the model is told `declined/expired: <prompt> (reason: …)`.
///         Some(_) => ToolResult::error("not approved"),
///         None => pending!(kind = "approval", prompt = format!("Approve purchase of {item}?")),
///     }
/// }
///
/// assert_eq!(ApprovePurchase.name(), "approve_purchase");
/// assert_eq!(ApprovePurchase.description(), "Requests spend approval before proceeding");
/// assert_eq!(ApprovePurchase.input_schema()["required"], serde_json::json!(["item"]));
/// ```
///
/// Next to the fn, which stays as written and callable, this generates a unit struct named
/// after it in UpperCamelCase (`ApprovePurchase`), with the fn's visibility, implementing
/// `Tool`. Register it with `Toolkit::builder().tool(ApprovePurchase)`.
///
/// # The struct's name
///
/// One rule for free fns and [`#[toolbox]`](macro@toolbox) methods: the UpperCamelCase of
/// the fn's path in its module, so `approve_purchase` gives `ApprovePurchase` and the method
/// `Shop::stock` gives `ShopStock`. `#[tool(struct_name = "…")]` sets another. A name that is
/// already taken in the scope — `#[tool] async fn estimate(..) -> Estimate` next to your own
/// `struct Estimate`, or `fn add` next to `use std::ops::Add` — is a compile error at the
/// fn that says so and suggests `struct_name` (a name brought in by a glob import, such as
/// `use super::*`, is reported as ambiguous at the same place):
///
/// ```text
/// error[E0277]: `Estimate` is already a name in this scope, so `#[tool]` cannot give it to
///               the struct it generates for `fn estimate`
///    |
///    | async fn estimate(city: String) -> Estimate {
///    |          ^^^^^^^^ name the generated struct yourself: `#[tool(struct_name = "EstimateTool")]`
/// ```
///
/// # Name and description
///
/// The tool is named after the fn (`r#type` gives `type`) and described by its `///` doc
/// comment: each line trimmed, lines joined with `\n`, the whole trimmed. The model reads
/// the description to decide when to call the tool, so a tool without one does not
/// compile; the error says to add a doc comment or a `description`.
///
/// | option | effect |
/// |---|---|
/// | `name = "get_weather"` | the name the model calls; only `a-z A-Z 0-9 _ -`, not empty |
/// | `description = "..."` | replaces the doc comment as the description |
/// | `struct_name = "AddTool"` | names the struct (e.g. when `Add` is already taken) |
/// | `output_schema` | declares the schema of the returned value (below) |
/// | `approval(prompt = "Pay {vendor}?", responders = ["group:finance"])` | asks a person before a call runs, and says who ([below](#approvals)) |
/// | `crate = "path"` | where the runtime crate is, e.g. when it is re-exported |
///
/// ```
/// use toolnexus::{tool, Tool};
///
/// #[tool(name = "add-numbers", description = "Adds two integers", struct_name = "AddTool")]
/// async fn add(a: i64, b: i64) -> String {
///     (a + b).to_string()
/// }
///
/// assert_eq!(AddTool.name(), "add-numbers");
/// ```
///
/// # Parameters
///
/// Every parameter that is not injected (below) is a property of the input schema, in
/// parameter order, with the name of the parameter. Its type must implement
/// `serde::Deserialize` and `schemars::JsonSchema` (nested structs and enums are inlined into
/// one self-contained schema). `Option<T>` parameters are optional; all others are
/// required. One helper attribute shapes a property, `#[arg(...)]`, with any of:
///
/// | option | effect |
/// |---|---|
/// | `description = "..."` | the property's description |
/// | `default = EXPR` | the value when the argument is missing or `null`; the property is then not required, and the schema shows the default (the type must be `Serialize`). A string literal converts with `From` (`default = "metric"` for a `String`) |
/// | `rename = "cityName"` | the property's name on the wire (and in error messages); the Rust name stays |
///
/// schemars' own field attributes on a parameter (`#[schemars(range(min = 1, max = 10))]`,
/// `#[schemars(length(max = 5))]`, `#[schemars(description = "...")]`, …) are passed
/// through to the property's schema; they shape what the model is told, not what is
/// decoded.
///
///
/// ```
/// use toolnexus::{tool, Tool};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// enum Unit { Celsius, Fahrenheit }
///
/// /// Current weather for a city
/// #[tool]
/// async fn weather(
///     #[arg(description = "City name, e.g. Paris")] city: String,
///     unit: Option<Unit>,
/// ) -> String {
///     let unit = if matches!(unit, Some(Unit::Fahrenheit)) { "°F" } else { "°C" };
///     format!("21{unit} in {city}")
/// }
///
/// let schema = Weather.input_schema();
/// assert_eq!(schema["properties"]["city"]["description"], "City name, e.g. Paris");
/// assert_eq!(schema["required"], serde_json::json!(["city"]));
/// ```
///
/// Arguments are decoded before the body runs. Arguments that do not decode (missing,
/// wrong type, not an object) never reach it: the call's result is an error naming the
/// tool and the field, e.g. `invalid arguments for weather: missing required argument
/// `city``. A panic in the body becomes an error result too; the run goes on.
///
/// # Injected parameters
///
/// These parameters are filled by the runtime, never by the model, and are not in the
/// schema:
///
/// | parameter type | receives |
/// |---|---|
/// | `Option<&Answer>` | the host's answer on a resumed call, `None` on a first call |
/// | `Option<Answered<T>>` | that answer with its data decoded into `T` (a typed answer) |
/// | `&ToolContext` | the whole call context (answer, provider call id, extensions, …) |
/// | `Ext<T>` | the value of type `T` the host attached to the run (`RunOptions::extension`) |
/// | `Option<Ext<T>>` | the same, `None` when the run has none |
///
/// A call whose run lacks the value of an `Ext<T>` parameter does not reach the body: its
/// result is the error ``tool `x` needs a `T` extension: attach it to the run with
/// `RunOptions::extension` ``, naming the tool and the type.
///
/// They are recognised by how the type is written: `Answer`, `Answered`, `ToolContext` and `Ext`
/// bare or behind the runtime's path (`toolnexus::Answer`, `::toolnexus::Answer`, or the
/// name the dependency is renamed to), any parameter name. The generated code then hands
/// over a value of the runtime's own type, so a type of yours that is merely also called
/// `Answer` is a type-mismatch error on that parameter, never a silently wrong value. For
/// another spelling, such as a type alias, mark the parameter: `#[answer]` (for an alias of
/// `Option<&Answer>` or `Option<Answered<T>>`) or `#[context]` (for `&ToolContext`).
///
/// A typed answer that does not decode into `T` is an error result,
/// `invalid answer for <tool>: <reason>`; the body does not run (see
/// [typed answers](#typed-answers)).
///
/// # Return type
///
/// Anything that implements `IntoToolResult` — `ToolResult`, `String`, `&'static str`, `()`,
/// `toolnexus::Json<T>`, or a `Result` of one of these whose error implements `Display`
/// (an `Err` becomes an error result with its message) — keeps its meaning; on top of
/// that any `T: serde::Serialize`, and `Result<T: Serialize, E: Display>`, is rendered as
/// compact JSON text, like `Json<T>`. A `String` is still plain text, not a JSON string.
/// Anything else is a compile error at the return type listing these.
///
/// `#[tool(output_schema)]` declares the JSON Schema of the returned value (`T` of `T`,
/// `Json<T>`, `Result<T, E>`; `T: schemars::JsonSchema`) as `Tool::output_schema()`, for
/// hosts that check or display structured output:
///
/// ```
/// use toolnexus::serde_json::json;
/// use toolnexus::{tool, Tool, ToolContext};
///
/// #[derive(serde::Serialize, schemars::JsonSchema)]
/// struct Outlook {
///     city: String,
///     days: u8,
/// }
///
/// /// Weather outlook for a city
/// #[tool(output_schema, struct_name = "OutlookTool")] // `Outlook` is the value's type
/// fn outlook(
///     #[arg(rename = "cityName")] city: String,
///     #[arg(default = 3)]
///     #[schemars(range(min = 1, max = 10))]
///     days: u8,
/// ) -> Outlook {
///     Outlook { city, days }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let schema = OutlookTool.input_schema();
/// assert_eq!(schema["required"], json!(["cityName"]));
/// let days = &schema["properties"]["days"];
/// assert_eq!((&days["default"], &days["minimum"], &days["maximum"]), (&json!(3), &json!(1), &json!(10)));
/// assert_eq!(OutlookTool.output_schema().unwrap()["required"], json!(["city", "days"]));
///
/// let done = OutlookTool.execute(json!({"cityName": "Paris"}), ToolContext::default()).await;
/// assert_eq!(done.output, r#"{"city":"Paris","days":3}"#);
/// # });
/// ```
///
/// A missing `days` takes its `default` (the schema shows it and no longer requires the
/// property); errors name a property by its wire name (`cityName`).
/// # Suspending
///
/// A body that needs a human returns a suspension, `toolnexus::pending!` or `toolnexus::auth_required!`. The
/// host answers it and the call runs again, from the top, with the answer injected. Code
/// before the `pending!` therefore runs on both calls: keep side effects (payments,
/// emails) after the answer is checked.
///
/// ```
/// use toolnexus::{pending, tool, Answer, Tool, ToolContext, ToolResult};
///
/// #[derive(Debug)]
/// struct OutOfStock;
/// impl std::fmt::Display for OutOfStock {
///     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
///         f.write_str("out of stock")
///     }
/// }
///
/// /// Buys an item once a human approves
/// #[tool]
/// async fn buy(item: String, answer: Option<&Answer>) -> Result<ToolResult, OutOfStock> {
///     if item == "unobtainium" {
///         return Err(OutOfStock);
///     }
///     let Some(answer) = answer else {
///         return Ok(pending!(kind = "approval", prompt = format!("Buy {item}?")));
///     };
///     // Only now, with the answer in hand, is it safe to spend money.
///     Ok(if answer.ok { ToolResult::ok(format!("bought {item}")) } else { ToolResult::error("declined") })
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let args = serde_json::json!({"item": "gpu"});
/// let parked = Buy.execute(args.clone(), ToolContext::default()).await;
/// let request = ToolResult::pending_of(&parked).unwrap();
/// let ctx = ToolContext::default().with_answer(Answer::ok(request.id));
/// assert_eq!(Buy.execute(args, ctx).await.output, "bought gpu");
/// # });
/// ```
///
/// A body that needs several answers at once asks them together with
/// `toolnexus::pending_all![(kind = …, prompt = …), (…)]`: each is its own request, answered
/// separately (a durable run lists them all in `result.waiting`, and a resume may answer a
/// few at a time), and the call runs again once, when every one is answered, reading them
/// from a `&ToolContext` parameter's `answers` in the order asked. A refusal of any ends
/// the call without running it again.
///
/// # Typed answers
///
/// When the human must type something in (an address, a choice, a quantity), take an
/// `Option<Answered<T>>` parameter and ask with `pending!`: the form is `T`'s, known from
/// the signature (`pending!(…, answer = T)` names it explicitly, for a tool that reads the
/// answer as `Option<&Answer>`). `T` derives
/// `serde::Deserialize` and `schemars::JsonSchema` and is a *form*: a struct whose named
/// fields are strings, numbers, integers, booleans or string enums, optional or not.
///
/// 1. The first call gets `None` and suspends; the request carries `T`'s form schema at
///    `request.data["schema"]` (`type: "object"`, each field's `type`, and `required`
///    listing the fields that are not `Option`), from which a host renders a form.
/// 2. The host answers with the values as `answer.data`, e.g.
///    `Answer::ok(request.id).with_data(json!({"city": "Paris", …}))`.
/// 3. The call runs again with `Some(answered)`: `answered.value` is the decoded `T` (also
///    reachable through `Deref`), `answered.answer` the whole answer.
///
/// ```
/// use toolnexus::serde_json::json;
/// use toolnexus::{pending, tool, Answer, Answered, ToolContext, ToolResult, Toolkit};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Shipping {
///     city: String,
///     zip: String,
/// }
///
/// /// Ships the order once the human has entered an address
/// #[tool]
/// async fn ship(order: u64, to: Option<Answered<Shipping>>) -> ToolResult {
///     match to {
///         None => pending!(kind = "input", prompt = "Where should it go?"),
///         Some(to) => ToolResult::ok(format!("order {order} to {} {}", to.zip, to.city)),
///     }
/// }
///
/// #[tokio::main(flavor = "current_thread")]
/// async fn main() -> Result<(), Box<dyn std::error::Error>> {
///     let tk = Toolkit::builder().tool(Ship).build()?;
///     let declared = &tk.to_openai()[0]["function"]["parameters"];
///     assert_eq!(declared["required"], json!(["order"]));
///
///     let args = json!({"order": 7});
///     let parked = tk.execute("ship", args.clone(), ToolContext::default()).await;
///     let request = ToolResult::pending_of(&parked).expect("it asks first");
///     assert_eq!(request.data.as_ref().unwrap()["schema"]["required"], json!(["city", "zip"]));
///
///     // The host checks what the person typed before resuming: a misfit names the field.
///     let typo = Answer::ok(&request.id).with_data(json!({"city": "Paris", "zip": 75001}));
///     assert_eq!(request.check_answer(&typo).unwrap_err().to_string(), "`zip`: must be text");
///
///     let fixed = Answer::ok(&request.id).with_data(json!({"city": "Paris", "zip": "75001"}));
///     request.check_answer(&fixed)?;
///     let done = tk.execute("ship", args, ToolContext::default().with_answer(fixed)).await;
///     assert_eq!(done.output, "order 7 to 75001 Paris");
///     Ok(())
/// }
/// ```
/// Data that does not fit the form (a number where a string belongs, a missing required
/// field, no data at all) never reaches the body: the call's result is the error
/// `invalid answer for ship: `zip`: must be text`, naming the field, and the agent loop
/// feeds it back to the model. A host checks the answer first with
/// `Request::check_answer`, the same check, so the person who typed it fixes it instead.
/// A `T` that is not a form (a `Vec` or nested struct field, say) is refused when a
/// `Toolkit` holding the tool is built (`ToolkitError::AnswerForm`, naming the tool and the
/// field; the tool gives its form as `Tool::answer_schema`), so no host is ever asked to
/// fill in an unusable form.
///
/// # Approvals
///
/// A tool whose calls a person must allow first declares it, and the agent loop asks
/// before the body runs (a request of kind `approval`; the body runs only once the answer
/// is ok). Say who may allow it: `responders` names people by the id they answer as and
/// groups as `group:NAME`, and the gate's request carries them at `data.responders`, where
/// `toolnexus-inbox` reads them and refuses anyone else's answer, at every door and on its
/// page. Without `responders`, whoever reaches a door may answer.
///
/// ```
/// use serde_json::json;
/// use toolnexus::{tool, Tool, Toolkit};
///
/// /// Pays a vendor's invoice
/// #[tool(approval(
///     prompt = "Pay {amount_cents} cents to {vendor}?",
///     when = amount_cents > 50000,
///     responders = ["group:finance"],
/// ))]
/// async fn pay_invoice(amount_cents: u64, vendor: String) -> String {
///     format!("paid {amount_cents} cents to {vendor}")
/// }
///
/// let tk = Toolkit::builder().tool(PayInvoice).build().unwrap();
/// let big = json!({"amount_cents": 120_000, "vendor": "Acme"});
/// let asked = tk.approval_request("pay_invoice", &big, "run-1/call-1").unwrap();
/// assert_eq!(asked.prompt, "Pay 120000 cents to Acme?");
/// assert_eq!(asked.responders(), Some(vec!["group:finance"]));
/// // A small payment runs without asking.
/// let small = json!({"amount_cents": 900, "vendor": "Acme"});
/// assert_eq!(tk.approval_request("pay_invoice", &small, "run-1/call-2"), None);
/// // Every gate of this toolkit names who may answer it.
/// assert!(tk.unrestricted_gates().is_empty());
/// ```
///
/// What the tool declares is its `Tool::approval`, the prompt a call asks with, or `None`
/// for a call that runs without asking, and its `Tool::approval_responders`:
///
/// | option | asks |
/// |---|---|
/// | `approval` | before every call, with the runtime's words: `Allow <tool> with <arguments>?` |
/// | `approval = "Delete {path}?"` | before every call, with these words |
/// | `approval(prompt = "Refund {amount}?", when = amount > 100.0)` | when the condition is true; `prompt` may be left out for the runtime's words |
/// | `approval(responders = ["group:finance", "ada@example.com"], ..)` | as above, and only these people and groups may answer |
/// | `approval(responders = ["group:finance"], quorum = 2, ..)` | as above, and the call runs only once 2 distinct people approved (one refusal declines it) |
/// | `approval(edits = ["memo"], ..)` / `approval(edits = false, ..)` | a person may change only these arguments / none when they approve |
/// | `approval(responders = [..], rememberable, ..)` | an approval may be remembered for the rest of the run, although people are named |
/// | `approval(responders = [..], not_requester, ..)` | the person who asked for the run may not approve it |
///
/// ```
/// use serde_json::json;
/// use toolnexus::{tool, Tool, Toolkit};
///
/// /// Deletes a file
/// #[tool(approval = "Delete {path}?")]
/// async fn delete_file(path: String) -> String {
///     format!("deleted {path}")
/// }
///
/// /// Refunds an order
/// #[tool(approval(prompt = "Refund {amount:.2} on order {order}?", when = amount > 100.0))]
/// async fn refund(order: u64, amount: f64) -> String {
///     format!("refunded {amount}")
/// }
///
/// assert_eq!(DeleteFile.approval(&json!({"path": "/tmp/x"})).as_deref(), Some("Delete /tmp/x?"));
/// assert_eq!(Refund.approval(&json!({"order": 7, "amount": 20.0})), None);
///
/// let tk = Toolkit::builder().tool(DeleteFile).tool(Refund).build().unwrap();
/// assert_eq!(tk.approval_prompt("refund", &json!({"order": 7, "amount": 250.0})).as_deref(),
///            Some("Refund 250.00 on order 7?"));
/// ```
///
/// The arguments are decoded exactly as for the call, defaults included; arguments the
/// call would refuse ask nothing, since the body never runs on them (the call's result is
/// the argument error).
///
/// - **The prompt** names parameters in braces, `{path}`, by their Rust names (`{type}` for
///   `r#type`, `{city}` for `#[arg(rename = "cityName")] city`). A value whose type has
///   `Display` is shown by it (a string without quotes, a number as it prints); any other
///   is shown as the JSON the model sent (`null` when left out). A format spec as in
///   `format!` applies (`{amount:.2}`, `{name:>10}`), but not one that picks another trait
///   (`{x:?}`) or takes a width from another argument (`$`, `*`). `{{` and `}}` are literal
///   braces. A name that is no argument of the tool, such as an injected parameter that
///   is filled in only once the call runs, is a compile error at the string that lists the
///   names it can show; so is a brace that is not closed.
/// - **The condition** is any `bool` expression over the parameters, which it sees by
///   value, as the body does (`amount > 100.0`, `path.starts_with("/etc")`); it is
///   evaluated before the prompt is formatted, so it should borrow what the prompt shows
///   rather than move it. In a [`#[toolbox]`](macro@toolbox) method taking `&self`, `self`
///   is the shared value (`when = amount > self.limit`). An expression that is not a
///   `bool`, or reads an injected parameter, is a compile error at the expression. A
///   condition that panics asks (a toolkit catches it: an approval fails closed).
/// - **The responders** are string literals, each a person's id (`"ada@example.com"`,
///   compared letter case aside) or a group (`"group:finance"`, whoever the host's sign-in
///   puts in it). A list that is empty, names someone twice, holds an empty name or
///   anything but a string literal is a compile error at the element. A door can list the
///   gates nobody restricted (`Toolkit::unrestricted_gates`) to warn of them.
/// - **The quorum** is an integer literal of at least 2: how many distinct people must
///   approve (`Tool::approval_quorum`; the gate's request carries it at `data.quorum`,
///   where `toolnexus-inbox` counts the approvals, one per person, a delegate's included).
///   Anything else, or more people than `responders` name when they name no group, is a
///   compile error at the number.
/// - **Edits** are any by default, and an edited call is judged again as the call it
///   becomes. `edits = false` forbids them, `edits = ["memo"]` lets a person change only
///   the arguments named, by their names on the wire (`Tool::approval_edits`; the gate's
///   request carries it at `data.edits`). `true`, an empty list, a repeated name or one
///   that is no argument of the tool is a compile error at it.
/// - **`rememberable`** lets an approval be remembered for the rest of the run
///   (`Answer::remember`) although the rule names responders or a quorum; without it, the
///   people named decide every call.
///
/// `approval` is given once per tool; a toolkit's own rules (`ToolkitBuilder::approval`)
/// ask for calls that the tool's approval lets through.
///
/// # Approvals of tools you did not write
///
/// In front of tools you did not write (an MCP server's, a `NativeTool` built at run time, a
/// toolbox), name them on the toolkit with `toolnexus::Approval`: a trailing `*` matches a
/// prefix, `.when(..)` asks only for some arguments, `.prompt(..)` words the request,
/// `.responders([..])` says who may answer (as `responders` does above). The
/// agent loop asks for them as it asks for a declared approval:
///
/// ```
/// use toolnexus::serde_json::{json, Value};
/// use toolnexus::testing::{MockLlm, Reply};
/// use toolnexus::{Answer, Approval, LlmClient, NativeTool, RunStatus, Toolkit};
///
/// #[tokio::main(flavor = "current_thread")]
/// async fn main() -> Result<(), Box<dyn std::error::Error>> {
///     let model = MockLlm::start([
///         Reply::tool_calls([
///             ("c1", "fs__delete", json!({"path": "/srv/old.log"})),
///             ("c2", "fs__delete", json!({"path": "/srv/data.db"})),
///             ("c3", "payments__refund", json!({"order": 7, "amount": 250.0})),
///         ]),
///         Reply::text("Cleaned up and refunded."),
///     ])
///     .await?;
///     let tool = |name: &str, schema: Value| {
///         let name = name.to_owned();
///         NativeTool::of(name.clone(), "a tool from elsewhere", schema,
///             move |args, _ctx| { let name = name.clone(); async move { format!("{name} ran with {args}") } })
///     };
///     let tk = Toolkit::builder()
///         .tool(tool("fs__delete", json!({"type": "object",
///             "properties": {"path": {"type": "string"}}, "required": ["path"]})))
///         .tool(tool("payments__refund", json!({"type": "object",
///             "properties": {"order": {"type": "integer"}, "amount": {"type": "number"}}})))
///         .approval(Approval::tools(["fs__*"]))
///         .approval(Approval::tools(["payments__refund"])
///             .when(|args: &Value| args["amount"].as_f64().unwrap_or(0.0) > 100.0)
///             .prompt(|_name: &str, args: &Value| format!("Refund {} on order {}?", args["amount"], args["order"])))
///         .build()?;
///     let client = LlmClient::builder()
///         .base_url(model.base_url())
///         .model("gpt-4o-mini")
///         .api_key("test-key")
///         .build()?;
///
///     // The three calls of the turn wait together, in call order.
///     let halted = client.run("tidy up and refund order 7", &tk).await?;
///     assert_eq!(halted.status, RunStatus::Pending);
///     let [log, db, refund] = &halted.waiting[..] else { panic!("three requests") };
///     assert_eq!(refund.prompt, "Refund 250.0 on order 7?");
///     assert_eq!(db.data.as_ref().unwrap()["args"], json!({"path": "/srv/data.db"}));
///
///     // One resume answers them all: approve, decline with a note, approve with edits.
///     let answers = vec![
///         Answer::ok(&log.id).remember(), // no more asking for fs__delete in this run
///         Answer::decline(&db.id, "declined").with_note("keep the database"),
///         Answer::ok(&refund.id).with_args(json!({"order": 7, "amount": 200.0})),
///     ];
///     let done = client.run_with_answers(halted.messages, answers, &tk).await?;
///     assert_eq!(done.status, RunStatus::Done);
///     assert_eq!(done.tool_calls[2].args["amount"], 200.0);
///     assert_eq!(done.tool_calls[2].proposed_args.as_ref().unwrap()["amount"], 250.0);
///     Ok(())
/// }
/// ```
///
/// - A gate's request has kind `approval` and `data` = `{"tool", "args", "argsSchema"}`: the
///   tool's name, the arguments the model proposed and the tool's input schema, enough for a
///   host to render an edit form; with `responders` too when the approval that asked names
///   them (the tool's own first, then the toolkit's rules in order). Its id is derived from the call, so the same call always asks
///   with the same id, and an answer given once is never lost to a re-run.
/// - `Answer::ok(id).with_args(..)` approves with edited arguments. They are checked against
///   the tool's schema before anything runs (`Request::check_answer`; a resume with a misfit
///   is `ClientError::InvalidAnswer`, naming the field). The tool runs with them, the
///   transcript's call shows them, `ToolCallRecord::proposed_args` keeps the model's, and the
///   result the model reads ends with a note naming the fields a person changed.
/// - A halted run lists every waiting call in `result.waiting` (`pending` is the first).
///   `client.run_with_answers(messages, answers, &tk)` settles each call whose request an
///   answer echoes — never another; calls still unanswered keep waiting and the run halts
///   again with the same requests; the model is called once every call of the turn has its
///   result. An answer to a request the transcript does not hold is refused, nothing run.
/// - `Answer::remember()` holds the decision for the same tool for the rest of the run, across
///   durable resumes (it travels in the transcript, as `ToolOutput::approval`), and never
///   beyond it: a new prompt asks again. A remembered decline refuses without asking.
/// - A new message on a conversation whose last run halted declines the waiting calls with
///   the reason `superseded`: the model is told, and the transcript stays balanced.
/// - A predicate that panics asks (a gate fails closed); a name that matches no tool of the
///   toolkit is `ToolkitError::UnknownApproval` when it is built. Tools that call `pending!`
///   themselves are unchanged: a gate sits in front of them, and its answer is not theirs.
///   Over MCP, a gated tool asks as any suspension does (see `toolnexus-mcp`).
///
/// # Requirements
///
/// The fn may be `async` or plain; a plain fn's body runs as is, on the task that runs the
/// tool, so keep it short (or hand blocking work to `tokio::task::spawn_blocking` from an
/// `async fn`).
///
/// Each of these is a compile error at the offending token, saying what to write instead:
/// it cannot have type or const parameters or a `where` clause; it
/// cannot take `self` (put `#[toolbox]` on the impl block for methods sharing a value);
/// every parameter is a plain identifier (destructure in the body); parameters are owned
/// (`String`, not `&str`) and not `impl Trait`; and the future of the body must be `Send`,
/// since agent loops run tools on multi-threaded runtimes (do not hold an `Rc` or a
/// `RefCell` borrow across an `.await`).
///
/// # The runtime crate's name
///
/// Generated code reaches the runtime through its name in your `Cargo.toml`, so it keeps
/// working when the dependency is renamed (`tn = { package = "toolnexus", … }`). Only a
/// re-export from another crate needs `#[tool(crate = "other::toolnexus")]`. You need
/// neither serde nor schemars in your `Cargo.toml` unless you derive their traits on your
/// own parameter types.
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    tool::expand(attr.into(), item.into()).into()
}

/// Turns the `#[tool]` methods of an impl block into tools that share one value: a
/// database handle, an HTTP client, state the tools read and change.
///
/// ```
/// use std::collections::HashMap;
/// use std::sync::{Arc, Mutex};
///
/// use toolnexus::{pending, toolbox, Answer, Toolbox, ToolContext, ToolResult, Toolkit};
///
/// struct Shop {
///     stock: Mutex<HashMap<String, u32>>,
/// }
///
/// #[toolbox]
/// impl Shop {
///     /// How many of an item are in stock
///     #[tool]
///     async fn stock(&self, sku: String) -> ToolResult {
///         ToolResult::ok(self.count(&sku).to_string())
///     }
///
///     /// Reserves items; asks a human above 10
///     #[tool]
///     async fn reserve(&self, sku: String, qty: u32, answer: Option<&Answer>) -> ToolResult {
///         match answer {
///             None if qty > 10 => {
///                 return pending!(kind = "approval", prompt = format!("Reserve {qty} of {sku}?"))
///             }
///             Some(a) if !a.ok => return ToolResult::error("not approved"),
///             _ => {}
///         }
///         let mut stock = self.stock.lock().unwrap();
///         let have = stock.entry(sku).or_default();
///         if *have < qty {
///             return ToolResult::error(format!("only {have} left"));
///         }
///         *have -= qty;
///         ToolResult::ok(format!("reserved {qty}, {have} left"))
///     }
///
///     // No #[tool]: an ordinary method.
///     fn count(&self, sku: &str) -> u32 {
///         self.stock.lock().unwrap().get(sku).copied().unwrap_or(0)
///     }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let shop = Arc::new(Shop { stock: Mutex::new(HashMap::from([("a".to_owned(), 20)])) });
/// let tk = Toolkit::builder().tools(shop.clone().into_tools()).build().unwrap();
///
/// let args = serde_json::json!({"sku": "a", "qty": 3});
/// let done = tk.execute("reserve", args, ToolContext::default()).await;
/// assert_eq!(done.output, "reserved 3, 17 left");
/// assert_eq!(shop.count("a"), 17); // every tool, and the caller, share the one value
///
/// let args = serde_json::json!({"sku": "a", "qty": 12});
/// let parked = tk.execute("reserve", args, ToolContext::default()).await;
/// assert_eq!(ToolResult::pending_of(&parked).unwrap().prompt, "Reserve 12 of a?");
/// # });
/// ```
///
/// `Arc::new(value).into_tools()` (trait `toolnexus::Toolbox`, implemented here) gives one
/// tool per `#[tool]` method, in the order written, each holding a clone of the `Arc`;
/// register them with `Toolkit::builder().tools(..)`. The impl block stays as written
/// (minus the `#[tool]` and parameter attributes), so the methods remain callable.
///
/// # The methods
///
/// A `#[tool]` method follows every rule of a [`#[tool]`](macro@tool) fn: its name,
/// description and schema come from its signature and doc comment, with the same
/// `#[tool(name = "…", description = "…", struct_name = "…")]` options and `#[arg]`
/// descriptions; `Option<&Answer>`, `Option<Answered<T>>`, `&ToolContext` and `Ext<T>`
/// parameters are injected; arguments are decoded before the body runs, a panic becomes an error result,
/// and the future must be `Send`. On top of that:
///
/// - The receiver is `&self` (also written `&'a self` or `self: &Self`). A toolbox's tools
///   may run at the same time, so `&mut self` is a compile error: keep changing state
///   behind a `Mutex`, an `RwLock` or atomics. `self` by value is an error too (the value
///   lives in a shared `Arc`).
/// - An associated fn without `self` is a tool of the box that does not use the value.
/// - Methods without `#[tool]`, and other items, are left alone.
/// - Which `#[tool]` is ours: a macro cannot see what a name resolves to, so the rule is by
///   spelling. `#[tool]` and `#[tool(...)]` written bare, and `#[PATH::tool]` where `PATH`
///   is the runtime's path (`toolnexus`, its renamed name, or the `crate = "..."` option),
///   are taken; a `tool` attribute under any other path (`#[other_crate::tool]`) is left on
///   the method for its own macro. To put another crate's `tool` attribute on a toolbox
///   method, spell its path.
///
/// Each tool is a struct next to the impl, named by the rule of `#[tool]`, the
/// UpperCamelCase of the method's path (`Shop::stock` gives `ShopStock`; `struct_name`
/// overrides it; see [the struct's name](macro@tool#the-structs-name)), with the method's
/// visibility. It shares the value; `ShopStock::new(arc)` makes that tool alone, e.g. to
/// give an agent only some of the box.
///
/// # The impl block
///
/// It must be an inherent impl (`impl Shop`, not `impl Trait for Shop`) of a type that is
/// not generic over the impl (`impl Store<Postgres>` is fine, `impl<T> Store<T>` is not),
/// with at least one `#[tool]` method; each of these is a compile error otherwise. The
/// type must be `Send + Sync + 'static`, since its tools are shared across threads. Tool
/// names must differ within a box. `#[toolbox(crate = "path")]` names the runtime crate
/// when it is re-exported (see [`tool`](macro@tool#the-runtime-crates-name)).
///
/// `#[toolbox]`, on the impl, is expanded before the attributes of its methods and takes
/// their `#[tool]` over. Inside an impl without `#[toolbox]`, `#[tool]` does not compile;
/// on a method taking `self`, the error says to add `#[toolbox]`.
#[proc_macro_attribute]
pub fn toolbox(attr: TokenStream, item: TokenStream) -> TokenStream {
    toolbox::expand(attr.into(), item.into()).into()
}

/// The engine of the runtime's `pending!`: `__pending!(RUNTIME_PATH; ARGS)`. The runtime's
/// `macro_rules!` front passes its own `$crate`, so the generated code names the runtime
/// however the user reaches it (renamed, re-exported). Not public API.
#[doc(hidden)]
#[proc_macro]
pub fn __pending(input: TokenStream) -> TokenStream {
    suspend::with_runtime(input.into(), suspend::pending)
        .unwrap_or_else(suspend::expression_error)
        .into()
}

/// The engine of the runtime's `pending_all!`, like [`__pending!`](macro@__pending).
#[doc(hidden)]
#[proc_macro]
pub fn __pending_all(input: TokenStream) -> TokenStream {
    suspend::with_runtime(input.into(), suspend::pending_all)
        .unwrap_or_else(suspend::expression_error)
        .into()
}

/// The engine of the runtime's `auth_required!`, like [`__pending!`](macro@__pending).
#[doc(hidden)]
#[proc_macro]
pub fn __auth_required(input: TokenStream) -> TokenStream {
    suspend::with_runtime(input.into(), suspend::auth_required)
        .unwrap_or_else(suspend::expression_error)
        .into()
}
