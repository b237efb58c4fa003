//! The transcript entry of a call's outcome, and whether a call is still the one its
//! placeholder asked for.

use crate::result::RESUME_KEY;
use crate::toolkit::sanitize_name;
use crate::{call_digest, Asks, ClientError, Request, ToolCall, ToolOutcome, ToolOutput};

impl ToolOutput {
    /// The transcript entry of `call`'s outcome: its result, or, when it suspended, its
    /// placeholder (as [`suspended`](Self::suspended) makes it), keeping what the call
    /// keeps for its re-run ([`resume`](Self::resume)).
    ///
    /// ```
    /// use toolnexus::serde_json::json;
    /// use toolnexus::{Request, ToolCall, ToolOutcome, ToolOutput, ToolResult};
    ///
    /// let call = ToolCall { id: "call_1".into(), name: "buy".into(), args: json!({}) };
    /// let done = ToolOutput::settled(&call, &ToolOutcome::classify(ToolResult::ok("bought")));
    /// assert_eq!((done.output.as_str(), done.is_error, done.is_pending()), ("bought", false, false));
    ///
    /// let asked = ToolResult::pending(Request::new("approval", "Buy?").with_url("https://x"));
    /// let waits = ToolOutput::settled(&call, &ToolOutcome::classify(asked));
    /// assert!(waits.is_pending() && waits.is_error);
    /// assert_eq!(waits.output, "Buy?", "the url is the host's to show, not the model's");
    /// ```
    pub fn settled(call: &ToolCall, outcome: &ToolOutcome) -> Self {
        match outcome {
            ToolOutcome::Pending {
                request,
                more,
                result,
            } => {
                let mut waits = placeholder(call, request, more);
                waits.resume = result
                    .metadata
                    .as_ref()
                    .and_then(|m| m.get(RESUME_KEY))
                    .map(|kept| Box::new(kept.clone()));
                waits
            }
            _ => {
                let result = outcome.result();
                ToolOutput {
                    call_id: call.id.clone(),
                    name: call.name.clone(),
                    output: result.output.clone(),
                    is_error: result.is_error,
                    pending: None,
                    pending_more: Vec::new(),
                    answered: Vec::new(),
                    approval: None,
                    trace: None,
                    call_digest: None,
                    resume: None,
                }
            }
        }
    }

    /// The placeholder of `call` waiting on `requests` (in the order it asked them): its
    /// text is their prompts, one a line (the urls are the host's to show, not the
    /// model's to read); it is an error to the model, since the call has no result yet;
    /// and it keeps the [`call_digest`] of the call as it waits, so a resume can tell the
    /// call was not changed ([`check_call`](Self::check_call)). `None` when `requests` is
    /// empty: a call that asks nothing does not wait.
    ///
    /// ```
    /// use toolnexus::serde_json::json;
    /// use toolnexus::{Request, ToolCall, ToolOutput};
    ///
    /// let call = ToolCall { id: "call_1".into(), name: "ship".into(), args: json!({}) };
    /// let both = vec![Request::new("input", "Name?"), Request::new("input", "City?")];
    /// let placeholder = ToolOutput::suspended(&call, both).unwrap();
    /// assert_eq!(placeholder.output, "Name?\nCity?");
    /// assert_eq!(placeholder.requests().count(), 2);
    /// assert!(placeholder.check_call(&call).is_ok());
    /// assert!(ToolOutput::suspended(&call, Vec::new()).is_none());
    /// ```
    pub fn suspended(call: &ToolCall, requests: Vec<Request>) -> Option<Self> {
        let mut requests = requests.into_iter();
        let first = requests.next()?;
        let more: Vec<Request> = requests.collect();
        Some(placeholder(call, &first, &more))
    }

    /// Whether `call` is still the call this placeholder's requests were asked for:
    /// [`ClientError::CallChanged`] when its digest (kept since the call began to wait;
    /// placeholders written before digests were kept have none, and pass) is not `call`'s,
    /// or when a gate's request names another tool or holds other arguments (or, relayed
    /// from a sub-agent, came through another agent than `call`'s tool). A resume
    /// settles nothing through a placeholder that fails this, so an answer never approves
    /// another call than the one a person was shown. A result that is no placeholder
    /// passes.
    ///
    /// ```
    /// use toolnexus::serde_json::json;
    /// use toolnexus::{ClientError, Request, ToolCall, ToolOutput};
    ///
    /// let call = ToolCall { id: "call_1".into(), name: "pay".into(), args: json!({"amount": 40}) };
    /// let placeholder = ToolOutput::suspended(&call, vec![Request::new("approval", "Pay?")]).unwrap();
    /// let changed = ToolCall { args: json!({"amount": 4000}), ..call.clone() };
    /// assert!(matches!(placeholder.check_call(&changed), Err(ClientError::CallChanged { .. })));
    /// ```
    pub fn check_call(&self, call: &ToolCall) -> Result<(), ClientError> {
        let Some(request) = &self.pending else {
            return Ok(());
        };
        let digest_differs = self
            .call_digest
            .as_ref()
            .is_some_and(|digest| *digest != call_digest(&call.name, &call.args));
        let gate_differs = self
            .requests()
            .any(|request| match (request.relay(), request.asks()) {
                // A request relayed from a sub-agent's run is that run's to hold to its call;
                // here the call must be the agent it came through.
                (Some(relay), _) => relay
                    .path
                    .first()
                    .is_none_or(|agent| sanitize_name(agent) != sanitize_name(&call.name)),
                (None, Asks::Gate { tool, args, .. }) => {
                    sanitize_name(tool) != sanitize_name(&call.name)
                        || args.is_some_and(|args| *args != call.args)
                }
                _ => false,
            });
        if digest_differs || gate_differs {
            return Err(ClientError::CallChanged {
                call: call.id.clone(),
                tool: call.name.clone(),
                request: request.id.clone(),
            });
        }
        Ok(())
    }
}

/// The one placeholder: `call` waiting on `first`, then `more`.
fn placeholder(call: &ToolCall, first: &Request, more: &[Request]) -> ToolOutput {
    let mut output = first.prompt.clone();
    for request in more {
        output.push('\n');
        output.push_str(&request.prompt);
    }
    ToolOutput {
        call_id: call.id.clone(),
        name: call.name.clone(),
        output,
        // No usable answer yet: to the model, a call that waits has failed for now.
        is_error: true,
        pending: Some(first.clone()),
        pending_more: more.to_vec(),
        answered: Vec::new(),
        approval: None,
        trace: None,
        call_digest: Some(call_digest(&call.name, &call.args)),
        resume: None,
    }
}
