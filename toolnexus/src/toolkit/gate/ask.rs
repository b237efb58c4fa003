//! A gate's question: whether a call of a gated tool must be approved before it runs (the
//! tool's own approval first, then the toolkit's rules in order), the request it asks with,
//! and who may answer it on what terms. Asked the same way by the loop, a door and a host
//! that gates calls itself, so a call always asks with the same id and the same terms.

use serde_json::{json, Value};
use uuid::Uuid;

use crate::toolkit::Toolkit;
use crate::{Asks, Request, RequestKind};

/// Names gate ids apart from any other v5 ids derived from the same text.
const GATES: Uuid = Uuid::from_u128(0x6f3c_2a1e_9b7d_4c05_8e21_d4a7_c3b9_0f62);

/// The request gating a call of `tool` with the model's `args`. Its id is derived from
/// `call` (what identifies the call: its run and its id) and the tool, so the same gated
/// call asks with the same id however often it is asked.
fn request(tool: &str, call: &str, args: &Value, schema: &Value, prompt: String) -> Request {
    let id = Uuid::new_v5(&GATES, format!("{call}\0{tool}").as_bytes());
    Request::new(RequestKind::Approval, prompt)
        .with_id(format!("approval-{id}"))
        .with_data(json!({"tool": tool, "args": args, "argsSchema": schema}))
}

impl Request {
    /// The tool a gate's request asks to run, when this is one (a request asked by an
    /// [`Approval`](crate::Approval) or `#[tool(approval = …)]`, whose `data` holds `tool`,
    /// `args` and `argsSchema`: [`Asks::Gate`]); `None` for a request a tool asked itself,
    /// and for a gate relayed from a sub-agent's run ([`Request::relay`]), which is that
    /// run's to settle.
    ///
    /// ```
    /// use toolnexus::{serde_json::json, Request};
    ///
    /// let asked = Request::new("approval", "Delete /tmp/x?")
    ///     .with_data(json!({"tool": "delete", "args": {"path": "/tmp/x"}, "argsSchema": {"type": "object"}}));
    /// assert_eq!(asked.gated_tool(), Some("delete"));
    /// assert_eq!(Request::new("approval", "Buy?").gated_tool(), None);
    /// ```
    pub fn gated_tool(&self) -> Option<&str> {
        if self.relay().is_some() {
            return None;
        }
        match self.asks() {
            Asks::Gate { tool, .. } => Some(tool),
            _ => None,
        }
    }
}

/// What identifies a run up to the turn that made a call, from `seed`: the run's id and
/// the turn's place, or the transcript before that turn. Either is the same in every
/// process that holds the transcript.
pub(crate) fn run_key(seed: &[u8]) -> Uuid {
    Uuid::new_v5(&GATES, seed)
}

/// Who decides a gated call, and on what terms, as the approval that asked says: its
/// responders, its quorum, which arguments may be edited (`Some([])`: none), whether a
/// decision may be remembered and whether the requester is kept from approving.
struct GateWho<'a> {
    responders: Option<Vec<&'a str>>,
    quorum: Option<u32>,
    edits: Option<Vec<&'a str>>,
    rememberable: bool,
    not_requester: bool,
}

impl Toolkit {
    /// The prompt a call of `name` with `args` must be approved with before it runs: the
    /// tool's own ([`Tool::approval`](crate::Tool::approval)), else the first of the toolkit's [`Approval`](crate::Approval)s
    /// covering it that asks; `None` when the call runs without asking (or the tool is
    /// unknown).
    pub fn approval_prompt(&self, name: &str, args: &Value) -> Option<String> {
        let i = self.position(name)?;
        let inner = &*self.inner;
        let name = &inner.names[i];
        inner.tools[i].approval(args).or_else(|| {
            inner.gated[i]
                .iter()
                .find_map(|&rule| inner.approvals[rule].ask(name, args))
        })
    }

    /// The request a call of `name` with `args` must be approved through before it runs
    /// (see [`approval_prompt`](Self::approval_prompt)), or `None` when it runs without
    /// asking. `call` identifies the call (e.g. its run and its id): the request's id is
    /// derived from it, so the same call always asks with the same id. Its `data` holds the
    /// tool's name (`tool`), `args` and the tool's input schema (`argsSchema`).
    ///
    /// ```
    /// use serde_json::json;
    /// use toolnexus::{Approval, NativeTool, Toolkit};
    ///
    /// let rm = NativeTool::of("fs__delete", "Deletes a file",
    ///     json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
    ///     |_args, _ctx| async { "deleted" });
    /// let tk = Toolkit::builder().tool(rm).approval(Approval::tools(["fs__*"])).build().unwrap();
    /// let args = json!({"path": "/tmp/x"});
    /// let asked = tk.approval_request("fs__delete", &args, "run-1/call-1").unwrap();
    /// assert_eq!(asked.kind, "approval");
    /// assert_eq!(asked.data.as_ref().unwrap()["args"], args);
    /// assert_eq!(asked.data.as_ref().unwrap()["argsSchema"]["required"], json!(["path"]));
    /// assert_eq!(tk.approval_request("fs__delete", &args, "run-1/call-1").unwrap().id, asked.id);
    /// assert_ne!(tk.approval_request("fs__delete", &args, "run-1/call-2").unwrap().id, asked.id);
    /// ```
    pub fn approval_request(&self, name: &str, args: &Value, call: &str) -> Option<Request> {
        let prompt = self.approval_prompt(name, args)?;
        self.gate_request(name, args, call, prompt)
    }

    /// The request gating a call of `name` that asks with `prompt` (see
    /// [`approval_request`](Self::approval_request)).
    pub(crate) fn gate_request(
        &self,
        name: &str,
        args: &Value,
        call: &str,
        prompt: String,
    ) -> Option<Request> {
        let i = self.position(name)?;
        let inner = &*self.inner;
        let mut request = request(&inner.names[i], call, args, &inner.schemas[i], prompt);
        if let Some(who) = self.gate_who(i, args) {
            if let Some(Value::Object(data)) = &mut request.data {
                if let Some(responders) = who.responders {
                    let list = responders.iter().map(|r| Value::from(*r)).collect();
                    data.insert("responders".to_owned(), Value::Array(list));
                }
                if let Some(n) = who.quorum.filter(|&n| n > 1) {
                    data.insert("quorum".to_owned(), Value::from(n));
                }
                match who.edits.as_deref() {
                    None => {}
                    Some([]) => {
                        data.insert("edits".to_owned(), Value::Bool(false));
                    }
                    Some(fields) => {
                        let list = fields.iter().map(|f| Value::from(*f)).collect();
                        data.insert("edits".to_owned(), Value::Array(list));
                    }
                }
                if who.rememberable {
                    data.insert("remember".to_owned(), Value::Bool(true));
                }
                if who.not_requester {
                    data.insert("notRequester".to_owned(), Value::Bool(true));
                }
            }
        }
        Some(request)
    }

    /// Who may answer the gate that asks for a call of tool `i` with `args`, and how many
    /// of them must approve: those of the approval that asked (the tool's own first, then
    /// the toolkit's rules in order, as [`approval_prompt`](Self::approval_prompt) picks
    /// the prompt); `None` when it names neither. Read only once a call is gated, so a call
    /// that runs without asking never pays for it; the deciding approval is asked again
    /// only when some approval of the tool names responders or a quorum.
    fn gate_who(&self, i: usize, args: &Value) -> Option<GateWho<'_>> {
        let inner = &*self.inner;
        let tool = &inner.tools[i];
        let own = tool.approval_responders().filter(|r| !r.is_empty());
        let own_quorum = tool.approval_quorum();
        let own_edits = tool.approval_edits();
        let own_remember = tool.approval_rememberable();
        let own_apart = tool.approval_not_requester();
        let rules = &inner.gated[i];
        let named = |&rule: &usize| {
            let rule = &inner.approvals[rule];
            rule.responders.is_some()
                || rule.quorum.is_some()
                || rule.edits.is_some()
                || rule.rememberable
                || rule.not_requester
        };
        let own_terms =
            own.is_some() || own_quorum.is_some() || own_edits.is_some() || own_remember;
        if !own_terms && !rules.iter().any(named) {
            return None;
        }
        if tool.approval(args).is_some() {
            return Some(GateWho {
                responders: own.map(<[&str]>::to_vec),
                quorum: own_quorum,
                edits: own_edits.map(<[&str]>::to_vec),
                rememberable: own_remember,
                not_requester: own_apart,
            });
        }
        let name = &inner.names[i];
        let rule = rules
            .iter()
            .map(|&rule| &inner.approvals[rule])
            .find(|rule| rule.ask(name, args).is_some())?;
        let responders = rule
            .responders
            .as_ref()
            .map(|list| list.iter().map(String::as_str).collect());
        Some(GateWho {
            responders,
            quorum: rule.quorum,
            edits: rule
                .edits
                .as_ref()
                .map(|list| list.iter().map(String::as_str).collect()),
            rememberable: rule.rememberable,
            not_requester: rule.not_requester,
        })
    }

    /// The tools whose calls may be gated by an approval that names no responders (the
    /// tool's own `#[tool(approval)]` without `responders`, or an [`Approval`](crate::Approval) of the
    /// toolkit's without [`responders`](crate::Approval::responders)), by their declared names,
    /// in registration order. Whoever can reach a door may answer such a gate, so a door
    /// can warn of them once, when it is built. A tool that asks by itself (`pending!`) is
    /// no gate and is not listed.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolnexus::{Approval, NativeTool, Toolkit};
    ///
    /// let tool = |name: &'static str| NativeTool::of(name, "Moves money",
    ///     json!({"type": "object"}), |_args, _ctx| async { "done" });
    /// let tk = Toolkit::builder()
    ///     .tool(tool("pay_invoice"))
    ///     .tool(tool("refund"))
    ///     .tool(tool("balance"))
    ///     .approval(Approval::tools(["pay_invoice"]).responders(["group:finance"]))
    ///     .approval(Approval::tools(["refund"]))
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(tk.unrestricted_gates(), ["refund"]);
    /// ```
    pub fn unrestricted_gates(&self) -> Vec<&str> {
        let inner = &*self.inner;
        let unrestricted = |i: &usize| {
            let own = inner.tools[*i].approval_responders();
            let rules = &inner.gated[*i];
            own.is_some_and(<[&str]>::is_empty)
                || rules
                    .iter()
                    .any(|&rule| inner.approvals[rule].responders.is_none())
        };
        (0..inner.names.len())
            .filter(unrestricted)
            .map(|i| inner.names[i].as_str())
            .collect()
    }
}
