//! What a request asks for, read once from its kind and its loosely shaped `data`, so that
//! every host (the loop, the inbox page, MCP elicitation) reads the same request the same
//! way.

use serde_json::{Map, Value};

use super::{Request, RequestKind};

/// What a [`Request`] asks of whoever answers it, as [`Request::asks`] reads it.
///
/// The rule, checked in this order (the first that holds wins):
///
/// 1. **[`Gate`](Asks::Gate)**: `data.tool` is a string and `data.argsSchema` an object, the
///    shape a declared approval writes (`{"tool", "args", "argsSchema"}`), whatever the
///    kind. Without an `argsSchema` object the request is no gate.
/// 2. **[`SignIn`](Asks::SignIn)**: the kind is `authorization`; a person signs in at the
///    request's `url`. A sign-in is never turned into a form, even with a `schema`.
/// 3. **[`Form`](Asks::Form)**: `data` has a `schema` key, whatever its value. A schema
///    that is not a JSON object is still a form, one that no answer can fill in: only a
///    refusal fits it ([`Request::check_answer`] refuses anything else, the inbox page
///    offers only declining, MCP cannot elicit it).
/// 4. **[`Confirm`](Asks::Confirm)**: anything else; a person says yes or no (a host may
///    ask a `question` or `input` for free text).
///
/// ```
/// use toolnexus::serde_json::json;
/// use toolnexus::{Asks, Request};
///
/// let gate = Request::new("approval", "Delete /tmp/x?").with_data(json!({
///     "tool": "delete", "args": {"path": "/tmp/x"}, "argsSchema": {"type": "object"}
/// }));
/// assert!(matches!(gate.asks(), Asks::Gate { tool: "delete", .. }));
///
/// let login = Request::new("authorization", "Sign in").with_url("https://example.com/login");
/// assert_eq!(login.asks(), Asks::SignIn { url: Some("https://example.com/login") });
///
/// let form = Request::new("input", "Zip?").with_data(json!({"schema": {"type": "object"}}));
/// assert!(matches!(form.asks(), Asks::Form { schema } if schema.is_object()));
///
/// assert_eq!(Request::new("approval", "Buy a gpu?").asks(), Asks::Confirm);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Asks<'a> {
    /// A declared approval asked before a tool runs: approve the call, approve it with
    /// edited arguments (which must fit `schema`), or refuse it.
    Gate {
        /// The tool the call would run.
        tool: &'a str,
        /// The arguments the model proposed (`data.args`), when the request holds them.
        args: Option<&'a Value>,
        /// The tool's input schema (`data.argsSchema`), which edited arguments must fit.
        schema: &'a Map<String, Value>,
    },
    /// A sign-in (kind `authorization`): a person signs in, then confirms, or cancels.
    SignIn {
        /// Where the person signs in (`request.url`), when the request says.
        url: Option<&'a str>,
    },
    /// A form to fill in (`data.schema`, e.g. from `pending!(…, answer = T)`); the
    /// answer's data must fit it. A schema that is not an object fits no answer.
    Form {
        /// The form's schema, as the request holds it.
        schema: &'a Value,
    },
    /// A plain confirmation: yes or no.
    Confirm,
}

impl<'a> Asks<'a> {
    /// The form to fill in: a [`Form`](Asks::Form)'s schema, when it is an object (one
    /// that is not fits no answer); `None` for anything else.
    ///
    /// ```
    /// use toolnexus::serde_json::json;
    /// use toolnexus::Request;
    ///
    /// let zip = Request::new("input", "Zip?").with_data(json!({"schema": {"type": "object"}}));
    /// assert!(zip.asks().form().is_some());
    /// let broken = Request::new("input", "Zip?").with_data(json!({"schema": "zip"}));
    /// assert!(broken.asks().form().is_none());
    /// ```
    pub fn form(&self) -> Option<&'a Map<String, Value>> {
        match *self {
            Asks::Form { schema } => schema.as_object(),
            _ => None,
        }
    }

    /// The input schema a [`Gate`](Asks::Gate) carries (`data["argsSchema"]`), which
    /// edited arguments ([`Answer::with_args`](crate::Answer::with_args)) must fit;
    /// `None` for anything that is not a gate.
    ///
    /// ```
    /// use toolnexus::serde_json::json;
    /// use toolnexus::Request;
    ///
    /// let gate = Request::new("approval", "Delete /tmp/x?").with_data(json!({
    ///     "tool": "delete", "args": {"path": "/tmp/x"}, "argsSchema": {"type": "object"}
    /// }));
    /// assert!(gate.asks().args_form().is_some());
    /// assert!(Request::new("approval", "Buy a gpu?").asks().args_form().is_none());
    /// ```
    pub fn args_form(&self) -> Option<&'a Map<String, Value>> {
        match *self {
            Asks::Gate { schema, .. } => Some(schema),
            _ => None,
        }
    }
}

impl Request {
    /// What this request asks: a gate, a sign-in, a form or a plain confirmation, by the
    /// rule [`Asks`] states. Every host reads a request through this, never through
    /// `data` by hand.
    ///
    /// ```
    /// use toolnexus::serde_json::json;
    /// use toolnexus::{Asks, Request};
    ///
    /// // A schema that is not an object is a form nothing fills in, not a confirmation.
    /// let broken = Request::new("input", "Zip?").with_data(json!({"schema": "zip"}));
    /// assert_eq!(broken.asks(), Asks::Form { schema: &json!("zip") });
    ///
    /// // A gate's data without its `argsSchema` is no gate.
    /// let half = Request::new("approval", "Delete?").with_data(json!({"tool": "delete", "args": {}}));
    /// assert_eq!(half.asks(), Asks::Confirm);
    /// ```
    pub fn asks(&self) -> Asks<'_> {
        let data = self.data.as_ref().and_then(Value::as_object);
        if let Some(data) = data {
            let tool = data.get("tool").and_then(Value::as_str);
            let schema = data.get("argsSchema").and_then(Value::as_object);
            if let (Some(tool), Some(schema)) = (tool, schema) {
                return Asks::Gate {
                    tool,
                    args: data.get("args"),
                    schema,
                };
            }
        }
        if let RequestKind::Authorization = self.kind {
            return Asks::SignIn {
                url: self.url.as_deref(),
            };
        }
        match data.and_then(|d| d.get("schema")) {
            Some(schema) => Asks::Form { schema },
            None => Asks::Confirm,
        }
    }

    /// Who may answer this request, as it names them itself (`data.responders`, a list of
    /// strings; entries that are not strings are skipped); `None` when it names nobody, so
    /// the host's own rules decide.
    ///
    /// ```
    /// use toolnexus::serde_json::json;
    /// use toolnexus::Request;
    ///
    /// let named = Request::new("approval", "Pay?")
    ///     .with_data(json!({"responders": ["group:finance", 7, "ada@example.com"]}));
    /// assert_eq!(named.responders(), Some(vec!["group:finance", "ada@example.com"]));
    /// assert_eq!(Request::new("approval", "Pay?").responders(), None);
    /// ```
    pub fn responders(&self) -> Option<Vec<&str>> {
        let list = self.data.as_ref()?.get("responders")?.as_array()?;
        Some(list.iter().filter_map(Value::as_str).collect())
    }

    /// How many distinct people must approve this request (`data.quorum`, a positive
    /// integer); 1 when it names none, or anything but a positive integer.
    ///
    /// ```
    /// use toolnexus::serde_json::json;
    /// use toolnexus::Request;
    ///
    /// let two = Request::new("approval", "Pay?").with_data(json!({"quorum": 2}));
    /// assert_eq!(two.quorum(), 2);
    /// assert_eq!(Request::new("approval", "Pay?").quorum(), 1);
    /// let odd = Request::new("approval", "Pay?").with_data(json!({"quorum": "2"}));
    /// assert_eq!(odd.quorum(), 1);
    /// let double = Request::new("approval", "Pay?").with_data(json!({"quorum": 2.0}));
    /// assert_eq!(double.quorum(), 2);
    /// ```
    pub fn quorum(&self) -> u32 {
        let n = self.data.as_ref().and_then(|d| d.get("quorum"));
        // `2.0` is 2: JSON that went through a protocol with only doubles (protobuf's
        // `Struct`) comes back so. What is no whole number reads as 1 here; hosts that
        // judge answers read the rule strictly ([`Request::rule`]) and refuse it.
        n.and_then(super::whole).unwrap_or(1)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn with(kind: &str, data: Value) -> Request {
        Request::new(kind, "Ask?").with_data(data)
    }

    fn gate_data() -> Value {
        json!({"tool": "delete", "args": {"path": "/a"}, "argsSchema": {"type": "object"}})
    }

    #[test]
    fn a_gate_is_its_tool_args_and_schema() {
        let request = with("approval", gate_data());
        let Asks::Gate { tool, args, schema } = request.asks() else {
            panic!("a gate: {:?}", request.asks());
        };
        assert_eq!(tool, "delete");
        assert_eq!(args, Some(&json!({"path": "/a"})));
        assert_eq!(schema.get("type"), Some(&json!("object")));
        assert_eq!(request.gated_tool(), Some("delete"));
    }

    #[test]
    fn a_gate_needs_a_tool_name_and_an_object_schema_but_not_args() {
        let no_args = with("approval", json!({"tool": "t", "argsSchema": {}}));
        assert!(matches!(no_args.asks(), Asks::Gate { args: None, .. }));
        for data in [
            json!({"tool": "t", "args": {}}),
            json!({"tool": "t", "args": {}, "argsSchema": "object"}),
            json!({"tool": 3, "args": {}, "argsSchema": {}}),
            json!({"args": {}, "argsSchema": {}}),
        ] {
            let request = with("approval", data.clone());
            assert_eq!(request.asks(), Asks::Confirm, "{data}");
            assert_eq!(request.gated_tool(), None, "{data}");
        }
    }

    #[test]
    fn a_gate_wins_over_its_kind_and_a_schema() {
        let mut data = gate_data();
        data["schema"] = json!({"type": "object"});
        for kind in ["approval", "authorization", "input"] {
            assert!(
                matches!(with(kind, data.clone()).asks(), Asks::Gate { .. }),
                "{kind}"
            );
        }
    }

    #[test]
    fn a_sign_in_is_any_authorization_with_or_without_a_url() {
        let bare = Request::new("authorization", "Sign in");
        assert_eq!(bare.asks(), Asks::SignIn { url: None });
        let at = bare.clone().with_url("https://login");
        assert_eq!(
            at.asks(),
            Asks::SignIn {
                url: Some("https://login")
            }
        );
        let with_form = at.with_data(json!({"schema": {"type": "object"}}));
        assert!(matches!(with_form.asks(), Asks::SignIn { .. }));
        // A URL on another kind is only a link to show.
        let elsewhere = Request::new("approval", "Read it?").with_url("https://doc");
        assert_eq!(elsewhere.asks(), Asks::Confirm);
    }

    #[test]
    fn a_schema_of_any_value_is_a_form() {
        for schema in [
            json!({"type": "object", "properties": {}}),
            json!("zip"),
            json!(null),
            json!([1]),
        ] {
            let request = with("input", json!({ "schema": schema }));
            assert_eq!(request.asks(), Asks::Form { schema: &schema });
        }
        let question = with("question", json!({"schema": {"type": "object"}}));
        assert!(matches!(question.asks(), Asks::Form { .. }));
    }

    #[test]
    fn anything_else_is_a_confirmation() {
        for request in [
            Request::new("approval", "Buy?"),
            Request::new("question", "Why?"),
            Request::new("payment", "Pay?"),
            with("approval", json!({"amount": 40})),
            with("input", json!("not an object")),
            with("input", json!(["schema"])),
        ] {
            assert_eq!(request.asks(), Asks::Confirm, "{request:?}");
        }
    }

    #[test]
    fn responders_are_the_strings_of_the_list() {
        let named = with("approval", json!({"responders": ["a", null, "b"]}));
        assert_eq!(named.responders(), Some(vec!["a", "b"]));
        let empty = with("approval", json!({"responders": []}));
        assert_eq!(empty.responders(), Some(vec![]));
        for data in [json!({"responders": "a"}), json!({}), json!(["a"])] {
            assert_eq!(with("approval", data.clone()).responders(), None, "{data}");
        }
    }
}
