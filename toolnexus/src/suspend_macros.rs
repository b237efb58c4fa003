//! `pending!`, `pending_all!` and `auth_required!`: thin `macro_rules!` fronts that hand their `$crate` to
//! the proc macros doing the work, so the code they generate names this crate however the
//! user reaches it — under its own name, renamed in Cargo.toml, or re-exported by another
//! crate.

/// A suspension: a `ToolResult` that parks the call until a host answers a `Request`.
///
/// ```text
/// pending!(kind = EXPR, prompt = EXPR [, url = EXPR] [, data = EXPR] [, id = EXPR]
///          [, expires_at = EXPR] [, responders = EXPR] [, answer = TYPE])
/// ```
///
/// Arguments are named, in any order, each given once; each value is evaluated once, in
/// the order written. `kind` (`"approval"`, `"input"`, `"question"`, …, or a
/// [`RequestKind`](crate::RequestKind) such as `RequestKind::Approval`) and `prompt` (text
/// a host shows) are required and take anything `Into<String>`, as do `url`, `id` (a
/// uuid v4 is generated when it is left out) and `expires_at` (RFC 3339). `data` is a
/// `serde_json::Value`, a JSON object. Never ask for secrets (passwords, keys) with
/// `input`/`question`: send the user to a login page with [`auth_required!`](crate::auth_required!).
///
/// The value is a `ToolResult` (`ToolResult::pending(Request::new(kind, prompt)…)`). In a
/// `#[tool]` fn returning `Result<ToolResult, E>`, write `return Ok(pending!(..))`. The
/// resumed call runs the body again from the top, so keep side effects after the answer
/// is checked (see [`tool`](macro@crate::tool#suspending)).
///
/// ```
/// use toolnexus::{pending, ToolResult};
///
/// let parked: ToolResult = pending!(
///     prompt = "Approve refund of $40?",
///     kind = "approval",
///     url = "https://shop.example/refunds/7",
///     data = serde_json::json!({"amount": 40}),
/// );
/// let request = ToolResult::pending_of(&parked).unwrap();
/// assert_eq!(request.kind, "approval");
/// assert_eq!(parked.output, "Approve refund of $40?\nhttps://shop.example/refunds/7");
///
/// let typed = pending!(kind = toolnexus::RequestKind::Question, prompt = "Which colour?");
/// assert_eq!(ToolResult::pending_of(&typed).unwrap().kind, toolnexus::RequestKind::Question);
/// ```
///
/// # Naming who may answer
///
/// `responders = [..]` (anything iterable over `Into<String>`) names the people
/// (`"ada@example.com"`) and groups (`"group:finance"`) who may answer, at
/// `request.data["responders"]`, next to the keys of `data`: a host that knows people (the
/// inbox, its page) refuses anyone else. An empty list, `data` that is not an object or
/// that already has `responders` makes the result an error rather than a request anyone
/// could answer.
///
/// ```
/// use toolnexus::{pending, ToolResult};
///
/// let parked = pending!(
///     kind = "approval",
///     prompt = "Refund $400?",
///     data = serde_json::json!({"amount": 400}),
///     responders = ["group:finance", "ada@example.com"],
/// );
/// let data = ToolResult::pending_of(&parked).unwrap().data.unwrap();
/// assert_eq!(data["responders"], serde_json::json!(["group:finance", "ada@example.com"]));
/// assert_eq!(data["amount"], 400);
///
/// let nobody: [&str; 0] = [];
/// let refused = pending!(kind = "approval", prompt = "Refund?", responders = nobody);
/// assert!(refused.is_error && ToolResult::pending_of(&refused).is_none());
/// ```
///
/// # Asking for a typed answer
///
/// `answer = T` puts the JSON schema of `T` at `request.data["schema"]` (next to the keys
/// of `data` when both are given; `data` must then be an object without a `schema` key), so
/// a host can render a form and answer with matching data. Read it back with an
/// `Option<Answered<T>>` parameter. `T` implements `schemars::JsonSchema` and must be a
/// *form*: a struct with named fields that are strings, numbers, integers, booleans or
/// string enums, optional or not (the flat shape MCP elicitation uses). The schema is
/// built and checked once per call site; a type that is not a form makes the result an
/// error (`ToolResult::error`) naming the offending field.
///
/// ```
/// use toolnexus::{pending, tool, Answered, Tool, ToolContext, ToolResult};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Shipping {
///     /// Postal code
///     zip: String,
/// }
///
/// /// Ships an item, asking where to
/// #[tool]
/// async fn ship(item: String, shipping: Option<Answered<Shipping>>) -> ToolResult {
///     match shipping {
///         Some(s) => ToolResult::ok(format!("{item} ships to {}", s.zip)),
///         None => pending!(kind = "input", prompt = "Where to?", answer = Shipping),
///     }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let parked = Ship.execute(serde_json::json!({"item": "gpu"}), ToolContext::default()).await;
/// let request = ToolResult::pending_of(&parked).unwrap();
/// let schema = &request.data.unwrap()["schema"];
/// assert_eq!(schema["properties"]["zip"]["type"], "string");
/// assert_eq!(schema["required"], serde_json::json!(["zip"]));
/// # });
/// ```
///
/// Missing `kind` or `prompt`, an unknown name and a duplicate name are compile errors
/// pointing at the call or at the name.
#[macro_export]
macro_rules! pending {
    ($($args:tt)*) => {
        $crate::__private::__pending!($crate; $($args)*)
    };
}

/// A suspension on several requests at once, answered separately: the call re-runs once
/// every one is answered, with all the answers in its context.
///
/// ```text
/// pending_all![(PENDING_ARGS), (PENDING_ARGS), …]
/// ```
///
/// Each parenthesized list is one request, written with [`pending!`]'s named arguments
/// (`kind` and `prompt` required; `url`, `data`, `id`, `expires_at`, `responders`,
/// `answer = T` as there), evaluated in the order written. The value is a `ToolResult`
/// ([`ToolResult::pending_all`](crate::ToolResult::pending_all)): the first request at
/// `metadata["pending"]`, the others at `metadata["pendingMore"]`.
///
/// The re-run reads its answers from [`ToolContext::answers`](crate::ToolContext::answers),
/// in the order the requests are written here (an `Option<&Answer>` parameter still gets
/// the first). With `wait_for`, each request goes to the host in turn and a refusal of any
/// refuses the call; a durable run halts listing them all in
/// [`RunResult::waiting`](crate::RunResult::waiting), and a resume may answer them
/// together or a few at a time.
///
/// ```
/// use toolnexus::{pending_all, tool, Answer, ToolContext, ToolResult};
///
/// /// Ships an order once the address and the gift note are known
/// #[tool]
/// async fn ship(order: u64, ctx: &ToolContext) -> ToolResult {
///     let [address, note] = ctx.answers.as_slice() else {
///         return pending_all![
///             (kind = "approval", prompt = format!("Ship order {order}?")),
///             (kind = "input", prompt = "Gift note?", id = format!("note-{order}")),
///         ];
///     };
///     ToolResult::ok(format!("order {order}: {} / {}", address.ok, note.ok))
/// }
///
/// let parked: ToolResult = pending_all![
///     (kind = "approval", prompt = "Ship?"),
///     (kind = "input", prompt = "Gift note?", id = "note"),
/// ];
/// let asked = ToolResult::requests_of(&parked);
/// assert_eq!(asked.len(), 2);
/// assert_eq!(asked[1].id, "note");
/// ```
///
/// An empty list, a request that is not a parenthesized list, and every mistake `pending!`
/// reports (a missing `kind`, an unknown or repeated name) are compile errors pointing at
/// the request at fault. Two requests with one id make the result an error, at run time.
#[macro_export]
macro_rules! pending_all {
    ($($args:tt)*) => {
        $crate::__private::__pending_all!($crate; $($args)*)
    };
}

/// A login suspension: a `ToolResult` of kind `"authorization"` sending the user to `url`.
///
/// ```text
/// auth_required!(url = EXPR [, prompt = EXPR])
/// ```
///
/// `url` is where the user signs in (`Into<String>`); `prompt` is optional (anything
/// `AsRef<str>`), a default one is used without it. The value is
/// `ToolResult::auth_required(url, prompt)`. Signing in happens entirely in the host; the
/// call then runs again with the answer injected, like any suspension (see [`pending!`]).
///
/// ```
/// use toolnexus::{auth_required, tool, Answer, ToolResult};
///
/// /// Lists today's meetings
/// #[tool]
/// async fn calendar(answer: Option<&Answer>) -> ToolResult {
///     match answer {
///         Some(a) if a.ok => ToolResult::ok("3 meetings"),
///         Some(_) => ToolResult::error("not signed in"),
///         None => auth_required!(url = "https://calendar.example/login", prompt = "Sign in to your calendar"),
///     }
/// }
///
/// let parked = auth_required!(url = "https://calendar.example/login");
/// let request = ToolResult::pending_of(&parked).unwrap();
/// assert_eq!(request.kind, "authorization");
/// ```
///
/// A missing `url`, an unknown name and a duplicate name are compile errors.
#[macro_export]
macro_rules! auth_required {
    ($($args:tt)*) => {
        $crate::__private::__auth_required!($crate; $($args)*)
    };
}
