//! Approvals declared in front of tools: [`Approval`], the rules a toolkit gates calls with,
//! whatever made the tools (native, MCP, toolbox, macro).

use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use serde_json::Value;

type When = dyn Fn(&Value) -> bool + Send + Sync;
type Prompt = dyn Fn(&str, &Value) -> String + Send + Sync;

/// A rule that makes the named tools ask a person before they run, given to
/// [`ToolkitBuilder::approval`](crate::ToolkitBuilder::approval).
///
/// A gated call asks with a request of kind `approval` whose `data` holds the tool's name
/// (`tool`), the arguments the model proposed (`args`) and the tool's input schema
/// (`argsSchema`, enough to render an edit form); an ok answer runs the tool (with the
/// answer's [`args`](crate::Answer::with_args) when a person edited them), a refusal tells
/// the model it was declined. Tools that suspend by themselves are unchanged: the gate sits
/// in front of them.
///
/// ```
/// use serde_json::{json, Value};
/// use toolnexus::{Approval, NativeTool, Toolkit};
///
/// let refund = NativeTool::of("payments__refund", "Refunds an order",
///     json!({"type": "object", "properties": {"amount": {"type": "number"}}}),
///     |args, _ctx| async move { format!("refunded {}", args["amount"]) });
/// let tk = Toolkit::builder()
///     .tool(refund)
///     .approval(Approval::tools(["payments__*"])
///         .when(|args: &Value| args["amount"].as_f64().unwrap_or(0.0) > 100.0)
///         .prompt(|name: &str, args: &Value| format!("{name}: refund {}?", args["amount"])))
///     .build()
///     .unwrap();
/// assert_eq!(tk.approval_prompt("payments__refund", &json!({"amount": 250.0})).as_deref(),
///            Some("payments__refund: refund 250.0?"));
/// assert_eq!(tk.approval_prompt("payments__refund", &json!({"amount": 20.0})), None);
/// ```
#[derive(Clone)]
pub struct Approval {
    pub(in crate::toolkit) patterns: Vec<String>,
    when: Option<Arc<When>>,
    prompt: Option<Arc<Prompt>>,
    /// Who may answer, as text (`ada@example.com`, `group:finance`); `None`: anyone.
    pub(in crate::toolkit) responders: Option<Vec<String>>,
    /// How many distinct people must approve; `None`: one.
    pub(in crate::toolkit) quorum: Option<u32>,
    /// Which arguments a person may change: `None` any, `Some([])` none.
    pub(in crate::toolkit) edits: Option<Vec<String>>,
    /// Whether a decision may be remembered although the rule names responders or a quorum.
    pub(in crate::toolkit) rememberable: bool,
    /// Whether the person who asked for the run is refused as its approver.
    pub(in crate::toolkit) not_requester: bool,
}

impl fmt::Debug for Approval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Approval")
            .field("tools", &self.patterns)
            .field("when", &self.when.as_ref().map(|_| "<fn>"))
            .field("prompt", &self.prompt.as_ref().map(|_| "<fn>"))
            .field("responders", &self.responders)
            .field("quorum", &self.quorum)
            .field("edits", &self.edits)
            .field("rememberable", &self.rememberable)
            .field("not_requester", &self.not_requester)
            .finish()
    }
}

impl Approval {
    /// Gates the tools named here, by the names the toolkit declares them under; a name
    /// ending in `*` matches every tool whose name starts with the rest (`"fs__*"`).
    pub fn tools<I, S>(names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Approval {
            patterns: names.into_iter().map(Into::into).collect(),
            when: None,
            prompt: None,
            responders: None,
            quorum: None,
            edits: None,
            rememberable: false,
            not_requester: false,
        }
    }

    /// Names who may answer: people by the id they answer as and groups as `group:NAME`
    /// (`["group:finance", "ada@example.com"]`). A gate's request carries them at
    /// `data.responders`, where an inbox reads them and refuses anyone else's answer at
    /// every door; without them anyone who can reach a door may answer (see
    /// [`Toolkit::unrestricted_gates`](crate::Toolkit::unrestricted_gates)). An empty list,
    /// or an empty name in it, makes [`build`](crate::ToolkitBuilder::build) fail, since
    /// nobody could answer.
    ///
    /// ```
    /// use serde_json::{json, Value};
    /// use toolnexus::{Approval, NativeTool, Toolkit};
    ///
    /// let pay = NativeTool::of("pay_invoice", "Pays a vendor's invoice",
    ///     json!({"type": "object", "properties": {"amount_cents": {"type": "integer"}}}),
    ///     |_args, _ctx| async { "paid" });
    /// let tk = Toolkit::builder()
    ///     .tool(pay)
    ///     .approval(Approval::tools(["pay_invoice"])
    ///         .when(|args: &Value| args["amount_cents"].as_i64().unwrap_or(i64::MAX) > 50_000)
    ///         .responders(["group:finance"]))
    ///     .build()
    ///     .unwrap();
    /// let asked = tk.approval_request("pay_invoice", &json!({"amount_cents": 90_000}), "run-1/call-1").unwrap();
    /// assert_eq!(asked.responders(), Some(vec!["group:finance"]));
    /// assert!(tk.unrestricted_gates().is_empty());
    /// ```
    pub fn responders<I, S>(mut self, responders: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.responders = Some(responders.into_iter().map(Into::into).collect());
        self
    }

    /// Needs `n` distinct people to approve, not one: the gate's request carries `n` at
    /// `data.quorum`, and an inbox resumes the run only once the `n`-th person approves (a
    /// refusal by any of them declines it). Pair it with [`responders`](Self::responders)
    /// naming a group or enough people; `n` of 0, or more people than the responders name
    /// when they name no group, makes [`build`](crate::ToolkitBuilder::build) fail.
    ///
    /// ```
    /// use serde_json::{json, Value};
    /// use toolnexus::{Approval, NativeTool, Toolkit};
    ///
    /// let pay = || NativeTool::of("pay_invoice", "Pays a vendor's invoice",
    ///     json!({"type": "object", "properties": {"amount_cents": {"type": "integer"}}}),
    ///     |_args, _ctx| async { "paid" });
    /// let tk = Toolkit::builder()
    ///     .tool(pay())
    ///     .approval(Approval::tools(["pay_invoice"])
    ///         .when(|args: &Value| args["amount_cents"].as_i64().unwrap_or(i64::MAX) > 1_000_000)
    ///         .responders(["group:finance"])
    ///         .quorum(2))
    ///     .build()
    ///     .unwrap();
    /// let asked = tk.approval_request("pay_invoice", &json!({"amount_cents": 2_000_000}), "run-1/call-1").unwrap();
    /// assert_eq!(asked.quorum(), 2);
    ///
    /// // Three of two people named: never reached.
    /// let short = Toolkit::builder()
    ///     .tool(pay())
    ///     .approval(Approval::tools(["pay_invoice"])
    ///         .responders(["ada@example.com", "bob@example.com"])
    ///         .quorum(3))
    ///     .build();
    /// assert!(matches!(short, Err(toolnexus::ToolkitError::Quorum { quorum: 3, .. })));
    /// ```
    pub fn quorum(mut self, n: u32) -> Self {
        self.quorum = Some(n);
        self
    }

    /// Lets a person approve or refuse the call as proposed, never change its arguments:
    /// the request carries `data.edits: false`, and an approval with edited arguments is
    /// refused by every host that checks answers ([`Request::check_answer`](crate::Request::check_answer)).
    pub fn no_edits(mut self) -> Self {
        self.edits = Some(Vec::new());
        self
    }

    /// Lets a person change only the named arguments (`data.edits: [...]`); an edit of any
    /// other is refused. Whatever may change, the edited call is judged again as the call
    /// it becomes: an edit that would make this rule, or another, ask for more people is
    /// not run on this approval.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolnexus::{Answer, Approval, NativeTool, Toolkit};
    ///
    /// let pay = NativeTool::of("pay_invoice", "Pays a vendor's invoice",
    ///     json!({"type": "object", "properties": {"vendor": {"type": "string"},
    ///            "memo": {"type": "string"}}}),
    ///     |_args, _ctx| async { "paid" });
    /// let tk = Toolkit::builder()
    ///     .tool(pay)
    ///     .approval(Approval::tools(["pay_invoice"]).edits_only(["memo"]))
    ///     .build()
    ///     .unwrap();
    /// let args = json!({"vendor": "Acme", "memo": "May"});
    /// let asked = tk.approval_request("pay_invoice", &args, "run-1/call-1").unwrap();
    /// let memo = Answer::ok(&asked.id).with_args(json!({"vendor": "Acme", "memo": "June"}));
    /// assert!(asked.check_answer(&memo).is_ok());
    /// let vendor = Answer::ok(&asked.id).with_args(json!({"vendor": "Mallory", "memo": "May"}));
    /// assert_eq!(asked.check_answer(&vendor).unwrap_err().field.as_deref(), Some("vendor"));
    /// ```
    pub fn edits_only<I, S>(mut self, fields: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.edits = Some(fields.into_iter().map(Into::into).collect());
        self
    }

    /// Lets a person's approval be remembered for the rest of the run
    /// ([`Answer::remember`](crate::Answer::remember)) although this rule names responders
    /// or a quorum (`data.remember: true`). Without it such an approval cannot be
    /// remembered: each call asks the people the rule names.
    pub fn rememberable(mut self) -> Self {
        self.rememberable = true;
        self
    }

    /// Keeps duties apart: the person who asked for the run (as the door that started it
    /// identified them) may not approve it, even when the rule names them
    /// (`data.notRequester: true`, judged by the inbox).
    pub fn not_requester(mut self) -> Self {
        self.not_requester = true;
        self
    }

    /// Asks only for the calls whose arguments make `when` true. A predicate that panics
    /// asks: a gate fails closed.
    pub fn when(mut self, when: impl Fn(&Value) -> bool + Send + Sync + 'static) -> Self {
        self.when = Some(Arc::new(when));
        self
    }

    /// Words the request from the tool's name and the proposed arguments; by default
    /// `Allow <name> with <args>?`.
    pub fn prompt(
        mut self,
        prompt: impl Fn(&str, &Value) -> String + Send + Sync + 'static,
    ) -> Self {
        self.prompt = Some(Arc::new(prompt));
        self
    }

    /// Whether `pattern` names `tool`.
    pub(in crate::toolkit) fn matches(pattern: &str, tool: &str) -> bool {
        match pattern.strip_suffix('*') {
            Some(prefix) => tool.starts_with(prefix),
            None => pattern == tool,
        }
    }

    /// Whether this rule names `tool`.
    pub(in crate::toolkit) fn covers(&self, tool: &str) -> bool {
        self.patterns.iter().any(|p| Self::matches(p, tool))
    }

    /// The prompt this rule asks `tool`'s call with, or `None` when its predicate says the
    /// call may run. A panicking predicate or prompt asks, with the default prompt.
    pub(in crate::toolkit) fn ask(&self, tool: &str, args: &Value) -> Option<String> {
        if let Some(when) = &self.when {
            match catch_unwind(AssertUnwindSafe(|| when(args))) {
                Ok(false) => return None,
                Ok(true) => {}
                Err(_) => {
                    tracing::warn!(tool, "an approval predicate panicked; asking");
                    return Some(default_prompt(tool, args));
                }
            }
        }
        let Some(prompt) = &self.prompt else {
            return Some(default_prompt(tool, args));
        };
        match catch_unwind(AssertUnwindSafe(|| prompt(tool, args))) {
            Ok(words) => Some(words),
            Err(_) => {
                tracing::warn!(tool, "an approval prompt panicked; asking with the default");
                Some(default_prompt(tool, args))
            }
        }
    }
}

/// The prompt of a gate that words nothing itself.
pub(crate) fn default_prompt(tool: &str, args: &Value) -> String {
    format!("Allow {tool} with {args}?")
}
