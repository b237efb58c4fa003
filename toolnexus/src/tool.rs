//! The [`Tool`] trait and what a call receives ([`ToolContext`]).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::Value;

use crate::client::{CallSeed, LentJournal};
use crate::result::RESUME_KEY;
use crate::{Answer, Extensions, Receipt, ToolResult};

/// A boxed, `Send` future, the return type of [`Tool::execute`].
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a tool call receives besides its arguments.
///
/// It is `#[non_exhaustive]`: build it with [`Default`] and the `with_*` methods so new
/// fields never break callers.
///
/// ```
/// use toolnexus::{Answer, ToolContext};
///
/// let ctx = ToolContext::default().with_answer(Answer::ok("req-1"));
/// assert!(ctx.answer.is_some());
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct ToolContext {
    /// The host's answer when the call is re-run after a suspension; `None` on a first run.
    pub answer: Option<Answer>,
    /// Every answer of a re-run call, in the order its requests were asked: one for a call
    /// that asked one question ([`ToolResult::pending`]), all of them for one that asked
    /// several at once ([`ToolResult::pending_all`](crate::ToolResult::pending_all)), whose
    /// `answer` is the first. Empty on a first run.
    pub answers: Vec<Answer>,
    /// The provider's id of the tool call, when the call comes from a model.
    pub call_id: Option<String>,
    /// The values the host attached to the run
    /// ([`RunOptions::extension`](crate::RunOptions::extension)); never seen by the model.
    pub extensions: Extensions,
    /// What identifies the run up to the call's turn, set by the loop: with `call_id`, what
    /// [`idempotency_key`](Self::idempotency_key) is made of.
    pub(crate) seed: Option<CallSeed>,
    /// The receipts the loop hands the call beyond its first answer's: those of every answer
    /// of a call that asked several questions, or of the approval a gated call runs under.
    pub(crate) receipts: Vec<Receipt>,
    /// What the call's suspension kept for the re-run that settles it (a sub-agent's
    /// halted run), handed back by the loop with the answers; `None` on a first run.
    pub(crate) resume: Option<Box<Value>>,
    /// The journal of the run that made the call, lent to a sub-agent's call so the
    /// steps of its own run are kept with the run's.
    pub(crate) journal: Option<LentJournal>,
}

/// Names idempotency keys apart from any other v5 ids derived from the same text.
const EFFECTS: uuid::Uuid = uuid::Uuid::from_u128(0x2b8e_61d4_0c5a_4f37_9a14_7e3f_b2c6_d908);

impl ToolContext {
    /// Attaches the answer a resumed call receives.
    pub fn with_answer(mut self, answer: Answer) -> Self {
        self.answer = Some(answer);
        self
    }

    /// Attaches the provider's tool-call id.
    pub fn with_call_id(mut self, call_id: impl Into<String>) -> Self {
        self.call_id = Some(call_id.into());
        self
    }

    /// Hands a re-run what the call kept for it when it suspended with `suspension` (a
    /// [`SubAgent`](crate::SubAgent)'s halted run), for a host that runs and settles calls
    /// itself; the agent loop does this by itself. A suspension that kept nothing leaves
    /// the context as it is.
    ///
    /// ```
    /// use toolnexus::{Request, ToolContext, ToolResult};
    ///
    /// let parked = ToolResult::pending(Request::new("approval", "Go?"));
    /// assert_eq!(ToolContext::default().resuming(&parked), ToolContext::default());
    /// ```
    pub fn resuming(mut self, suspension: &ToolResult) -> Self {
        let kept = suspension.metadata.as_ref().and_then(|m| m.get(RESUME_KEY));
        if let Some(kept) = kept {
            self.resume = Some(Box::new(kept.clone()));
        }
        self
    }

    /// Hands a re-run `kept`, the value its call's suspension kept
    /// ([`ToolResult::kept_of`]), for a host that carried that value alone between rounds
    /// rather than the whole suspension ([`resuming`](Self::resuming)).
    pub fn resuming_kept(mut self, kept: Value) -> Self {
        self.resume = Some(Box::new(kept));
        self
    }

    /// Attaches the run's values (replacing any attached before).
    pub fn with_extensions(mut self, extensions: Extensions) -> Self {
        self.extensions = extensions;
        self
    }

    /// A key for this call's effect: the same in every process that runs or re-runs this
    /// call of this run (a re-run after an answer, a resume in another process, a worker
    /// taking over a crashed one) and different for every other call, so the system the
    /// tool acts on can do the effect once. `None` when the call does not come from a
    /// run's loop (a tool called directly).
    ///
    /// A run resumed by the inbox runs a call again when its worker died after the effect
    /// and before the outcome was stored; pass the key where the effect happens:
    ///
    /// ```
    /// use toolnexus::{NativeTool, ToolContext};
    ///
    /// let refund = NativeTool::of(
    ///     "refund",
    ///     "Refunds an order",
    ///     serde_json::json!({"type": "object", "properties": {"order": {"type": "string"}}}),
    ///     |args, ctx: ToolContext| async move {
    ///         let mut post = reqwest::Client::new()
    ///             .post("https://payments.example/refunds")
    ///             .json(&args);
    ///         if let Some(key) = ctx.idempotency_key() {
    ///             // The payment service refunds once per key, however often it is asked.
    ///             post = post.header("Idempotency-Key", key);
    ///         }
    ///         # let _ = post;
    ///         "refunded"
    ///     },
    /// );
    /// # let _ = refund;
    /// assert_eq!(ToolContext::default().with_call_id("call_1").idempotency_key(), None);
    /// ```
    pub fn idempotency_key(&self) -> Option<String> {
        let seed = self.seed.as_ref()?;
        let call = self.call_id.as_deref()?;
        Some(uuid::Uuid::new_v5(&EFFECTS, format!("{seed}\0{call}").as_bytes()).to_string())
    }

    /// The signed receipts this call runs under: those of the answers it re-runs with, or,
    /// for a call behind an approval, those of the approval that let it run — the proof of
    /// who approved it, to hand to the system the tool acts on. Empty on a first run that
    /// nobody approved, and for answers without receipts. A resume has already refused
    /// receipts issued for another request or call, so each names this call as it runs.
    ///
    /// ```
    /// use toolnexus::{Answer, ToolContext};
    ///
    /// assert!(ToolContext::default().receipts().is_empty());
    /// let ctx = ToolContext::default().with_answer(Answer::ok("req-1"));
    /// assert!(ctx.receipts().is_empty());
    /// ```
    pub fn receipts(&self) -> &[Receipt] {
        if !self.receipts.is_empty() {
            return &self.receipts;
        }
        self.answer.as_ref().map_or(&[], |answer| &answer.receipts)
    }

    /// The run's value of type `T`, if the host attached one.
    ///
    /// ```
    /// use toolnexus::{Extensions, ToolContext};
    ///
    /// struct Tenant(&'static str);
    /// let ctx = ToolContext::default().with_extensions(Extensions::new().with(Tenant("acme")));
    /// assert_eq!(ctx.extension::<Tenant>().map(|t| t.0), Some("acme"));
    /// assert!(ctx.extension::<u64>().is_none());
    /// ```
    pub fn extension<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.extensions.get()
    }
}

/// A tool an LLM can call.
///
/// Usually generated by [`#[tool]`](crate::tool) or [`#[toolbox]`](crate::toolbox), or built
/// at run time with [`NativeTool::of`](crate::NativeTool::of). The trait is object-safe: a
/// [`Toolkit`](crate::Toolkit) holds its tools as `Arc<dyn Tool>`, which is itself a `Tool`.
pub trait Tool: Send + Sync + 'static {
    /// The name the model calls it by.
    fn name(&self) -> &str;
    /// What it does, for the model.
    fn description(&self) -> &str;
    /// Its arguments as a JSON-Schema object.
    fn input_schema(&self) -> &Value;
    /// Runs one call. The context is taken by value and moved into the future, which is what
    /// lets generated tools lend `Option<&Answer>` to their bodies.
    fn execute(&self, args: Value, ctx: ToolContext) -> BoxFuture<'_, ToolResult>;
    /// Where the tool comes from, as metrics and traces report it;
    /// [`ToolSource::Native`], the default, for in-process tools.
    fn source(&self) -> ToolSource<'_> {
        ToolSource::Native
    }
    /// The form the tool's typed answers are asked with (`request.data["schema"]`), when it
    /// takes one: `Some(Ok(form))`, or `Some(Err(reason))` when the answer type cannot be a
    /// form (a [`Toolkit`](crate::Toolkit) refuses such a tool when it is built). A
    /// `#[tool]` with an `Option<Answered<T>>` parameter gives `T`'s form; the default is
    /// `None`.
    fn answer_schema(&self) -> Option<Result<&Value, &str>> {
        None
    }
    /// The JSON Schema of what the tool returns, when it declares one (a `#[tool]` with
    /// `output_schema`, a [`NativeTool`](crate::NativeTool) given one); the default is `None`.
    fn output_schema(&self) -> Option<&Value> {
        None
    }
    /// The prompt a person must approve before this call runs with `args`, when the tool
    /// declares an approval (`#[tool(approval = "…")]`); `None`, the default, runs the call
    /// without asking. The agent loop asks it as a request of kind `approval` and runs the
    /// body only once the answer is ok (see [`Approval`](crate::Approval) for gating tools
    /// from outside).
    fn approval(&self, args: &Value) -> Option<String> {
        let _ = args;
        None
    }
    /// Who may answer the tool's declared approval
    /// (`#[tool(approval(responders = ["group:finance"]))]`): `None`, the default, when the
    /// tool declares no approval; `Some(&[])` when it declares one anyone may answer; else
    /// people by id and groups as `group:NAME`. A gate's request carries them at
    /// `data.responders`, where an inbox reads who may answer.
    fn approval_responders(&self) -> Option<&[&str]> {
        None
    }
    /// How many distinct people must approve the tool's declared approval
    /// (`#[tool(approval(quorum = 2, responders = ["group:finance"]))]`); `None`, the
    /// default, for one. A gate's request carries it at `data.quorum`, where an inbox
    /// counts the approvals.
    fn approval_quorum(&self) -> Option<u32> {
        None
    }
    /// Which arguments a person may change when they approve the tool's declared approval
    /// (`#[tool(approval(edits = ["memo"]))]`); `None`, the default, for any, `Some(&[])`
    /// for none (`edits = false`). A gate's request carries it at `data.edits`, and every
    /// host that checks answers refuses any other edit.
    fn approval_edits(&self) -> Option<&[&str]> {
        None
    }
    /// Whether an approval of the tool's declared approval may be remembered for the rest
    /// of the run although it names responders or a quorum
    /// (`#[tool(approval(rememberable))]`); `false` by default. A gate's request carries
    /// it at `data.remember`.
    fn approval_rememberable(&self) -> bool {
        false
    }
    /// Whether the person who asked for the run may not approve the tool's declared
    /// approval (`#[tool(approval(not_requester))]`); `false` by default. A gate's request
    /// carries it at `data.notRequester`.
    fn approval_not_requester(&self) -> bool {
        false
    }
}

/// A tool behind a pointer is the tool itself: every method forwards to it. One
/// definition for every pointer, so a method added to [`Tool`] cannot be forwarded by one
/// and forgotten by another (its default would silently answer instead).
macro_rules! forward_tool {
    ($($pointer:ident),+) => {$(
        impl<T: Tool + ?Sized> Tool for $pointer<T> {
            fn name(&self) -> &str {
                (**self).name()
            }
            fn description(&self) -> &str {
                (**self).description()
            }
            fn input_schema(&self) -> &Value {
                (**self).input_schema()
            }
            fn execute(&self, args: Value, ctx: ToolContext) -> BoxFuture<'_, ToolResult> {
                (**self).execute(args, ctx)
            }
            fn source(&self) -> ToolSource<'_> {
                (**self).source()
            }
            fn answer_schema(&self) -> Option<Result<&Value, &str>> {
                (**self).answer_schema()
            }
            fn output_schema(&self) -> Option<&Value> {
                (**self).output_schema()
            }
            fn approval(&self, args: &Value) -> Option<String> {
                (**self).approval(args)
            }
            fn approval_responders(&self) -> Option<&[&str]> {
                (**self).approval_responders()
            }
            fn approval_quorum(&self) -> Option<u32> {
                (**self).approval_quorum()
            }
            fn approval_edits(&self) -> Option<&[&str]> {
                (**self).approval_edits()
            }
            fn approval_rememberable(&self) -> bool {
                (**self).approval_rememberable()
            }
            fn approval_not_requester(&self) -> bool {
                (**self).approval_not_requester()
            }
        }
    )+};
}

forward_tool!(Arc, Box);

/// Where a [`Tool`] comes from ([`Tool::source`]). Its `Display` is the label metrics
/// report (the `source` of [`MetricEvent::Tool`](crate::MetricEvent::Tool) and of
/// `toolnexus_tool_calls_total`): `native`, `builtin`, `mcp:<server>`, `a2a:<agent>`,
/// `agent:<name>`, or another origin as written.
///
/// ```
/// use toolnexus::ToolSource;
///
/// assert_eq!(ToolSource::Native.to_string(), "native");
/// assert_eq!(ToolSource::Mcp { server: "shop" }.to_string(), "mcp:shop");
/// assert_eq!(ToolSource::A2a { agent: "shop" }.to_string(), "a2a:shop");
/// assert_eq!(ToolSource::Agent { agent: "payments" }.to_string(), "agent:payments");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ToolSource<'a> {
    /// An in-process tool: `#[tool]`, [`NativeTool`](crate::NativeTool), a hand-written
    /// [`Tool`]. Shown as `native`.
    Native,
    /// One of the ready-made tools of [`builtin`](crate::builtin). Shown as `builtin`.
    Builtin,
    /// A tool of an MCP server, by the name the toolkit knows the server by. Shown as
    /// `mcp:<server>`.
    Mcp {
        /// The server's name.
        server: &'a str,
    },
    /// A remote A2A agent called as a tool, by the tool name the agent goes by. Shown as
    /// `a2a:<agent>`.
    A2a {
        /// The agent's tool name.
        agent: &'a str,
    },
    /// An agent of this process called as a tool ([`SubAgent`](crate::SubAgent)), by the
    /// tool name it goes by. Shown as `agent:<name>`.
    Agent {
        /// The agent's tool name.
        agent: &'a str,
    },
    /// Any other origin (a tool from another protocol's adapter), shown as written.
    Other(&'a str),
}

impl<'a> ToolSource<'a> {
    /// The label, borrowed where it is written already: only a server's or an agent's is
    /// built.
    pub(crate) fn label(&self) -> std::borrow::Cow<'a, str> {
        match *self {
            ToolSource::Native => "native".into(),
            ToolSource::Builtin => "builtin".into(),
            ToolSource::Mcp { server } => format!("mcp:{server}").into(),
            ToolSource::A2a { agent } => format!("a2a:{agent}").into(),
            ToolSource::Agent { agent } => format!("agent:{agent}").into(),
            ToolSource::Other(text) => text.into(),
        }
    }
}

impl fmt::Display for ToolSource<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label())
    }
}

/// A value whose `#[tool]` methods become tools sharing it; implemented by
/// [`#[toolbox]`](crate::toolbox).
pub trait Toolbox: Send + Sync + 'static {
    /// One tool per `#[tool]` method, each holding a clone of the `Arc`.
    fn into_tools(self: Arc<Self>) -> Vec<Arc<dyn Tool>>;
}

/// A typed answer: the host's [`Answer`] with its data decoded into `T`.
///
/// A tool that needs structured input from a human asks with
/// [`pending!(…, answer = T)`](crate::pending), which puts `T`'s form schema at
/// `request.data["schema"]`; a host renders that form and answers with the filled-in values
/// as [`Answer::data`]. On the resumed call, a `#[tool]` parameter of type
/// `Option<Answered<T>>` receives them decoded: `None` on the first call, `Some` with
/// [`value`](Self::value) (also reachable through `Deref`, so `a.city` reads `a.value.city`)
/// and the [`answer`](Self::answer) it came from.
///
/// Data that does not decode into `T` never reaches the body: the call's result is the
/// error `invalid answer for <tool>: <reason>`, which the agent loop feeds back to the
/// model like any tool error.
///
/// ```
/// use toolnexus::{pending, tool, Answer, Answered, Tool, ToolContext, ToolResult};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Shipping {
///     city: String,
///     zip: String,
///     express: bool,
/// }
///
/// /// Ships the order once the human has entered an address
/// #[tool]
/// async fn ship(order: u64, answer: Option<Answered<Shipping>>) -> ToolResult {
///     match answer {
///         None => pending!(kind = "input", prompt = "Where should it go?", answer = Shipping),
///         Some(a) => ToolResult::ok(format!("order {order} to {} {}", a.value.zip, a.city)),
///     }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let args = serde_json::json!({"order": 7});
/// let parked = Ship.execute(args.clone(), ToolContext::default()).await;
/// let request = ToolResult::pending_of(&parked).unwrap();
/// let form = &request.data.as_ref().unwrap()["schema"];
/// assert_eq!(form["properties"]["express"]["type"], "boolean");
/// assert_eq!(form["required"], serde_json::json!(["city", "zip", "express"]));
///
/// let filled = serde_json::json!({"city": "Paris", "zip": "75001", "express": false});
/// let ctx = ToolContext::default().with_answer(Answer::ok(&request.id).with_data(filled));
/// assert_eq!(Ship.execute(args.clone(), ctx).await.output, "order 7 to 75001 Paris");
///
/// let mistyped = serde_json::json!({"city": "Paris", "zip": 75001, "express": false});
/// let ctx = ToolContext::default().with_answer(Answer::ok(&request.id).with_data(mistyped));
/// let refused = Ship.execute(args, ctx).await;
/// assert!(refused.is_error);
/// assert!(refused.output.starts_with("invalid answer for ship: "));
/// # });
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Answered<T> {
    /// The decoded `answer.data`.
    pub value: T,
    /// The answer it came from.
    pub answer: Answer,
}

impl<T> std::ops::Deref for Answered<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}
