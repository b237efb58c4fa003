//! [`Relay`]: where a request relayed from a sub-agent's run comes from. A request a tool
//! of a [`SubAgent`](crate::SubAgent) asked reaches the run that called the agent with its
//! rule and form as they were, and `data.via` saying which agents it came through; a gate
//! asked in the agent's run stays that run's gate, never one of the calling run.

use serde_json::{Map, Value};

use super::Request;

/// The member of a relayed request's `data` that says where it comes from.
pub(crate) const VIA_KEY: &str = "via";

/// Where a relayed request comes from, as [`Request::relay`] reads `data.via`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Relay<'a> {
    /// The calls it came through, from the run that halted on it inwards: the agent tool
    /// this run called, each agent that tool's run called in turn, and last the tool that
    /// asked (`data.via.path`).
    pub path: Vec<&'a str>,
    /// What the tool that asked said, before the agents it came through were named in
    /// front of it (`data.via.prompt`).
    pub prompt: &'a str,
}

impl<'a> Relay<'a> {
    /// The agents the request came through, outermost first: the path without the tool
    /// that asked.
    pub fn agents(&self) -> &[&'a str] {
        self.path.split_last().map_or(&[], |(_, agents)| agents)
    }

    /// The tool that asked, innermost.
    pub fn tool(&self) -> &'a str {
        self.path.last().copied().unwrap_or_default()
    }
}

impl Request {
    /// Where this request comes from when a [`SubAgent`](crate::SubAgent) relayed it
    /// from its own run; `None` for a request asked in the run that halted on it (or whose
    /// `data.via` is not a path of names and a prompt). A relayed gate is shown and
    /// checked as the gate it is ([`asks`](Self::asks), [`check_answer`](Self::check_answer)),
    /// but it is the agent's run, resumed with the answer, that runs or refuses the call.
    ///
    /// ```
    /// use toolnexus::serde_json::json;
    /// use toolnexus::Request;
    ///
    /// let relayed = Request::new("approval", "payments: Refund order A-7?").with_data(json!({
    ///     "via": {"path": ["payments", "refund"], "prompt": "Refund order A-7?"}
    /// }));
    /// let relay = relayed.relay().unwrap();
    /// assert_eq!((relay.agents(), relay.tool()), (&["payments"][..], "refund"));
    /// assert_eq!(relay.prompt, "Refund order A-7?");
    /// assert!(Request::new("approval", "Refund?").relay().is_none());
    /// ```
    pub fn relay(&self) -> Option<Relay<'_>> {
        let via = self.data.as_ref()?.get(VIA_KEY)?.as_object()?;
        relay_of(via)
    }
}

fn relay_of(via: &Map<String, Value>) -> Option<Relay<'_>> {
    let path: Vec<&str> = via
        .get("path")?
        .as_array()?
        .iter()
        .map(|step| step.as_str().filter(|s| !s.is_empty()))
        .collect::<Option<_>>()?;
    // An agent and the tool of its run that asked, at least.
    if path.len() < 2 {
        return None;
    }
    let prompt = via.get("prompt")?.as_str()?;
    Some(Relay { path, prompt })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_via_that_is_no_path_of_names_and_a_prompt_is_no_relay() {
        for via in [
            json!("payments"),
            json!({"path": ["payments"], "prompt": "Go?"}),
            json!({"path": ["payments", ""], "prompt": "Go?"}),
            json!({"path": ["payments", 7], "prompt": "Go?"}),
            json!({"path": ["payments", "refund"]}),
            json!({"path": "payments/refund", "prompt": "Go?"}),
        ] {
            let request = Request::new("approval", "Go?").with_data(json!({ "via": via }));
            assert_eq!(request.relay(), None, "{via}");
        }
        let deep = Request::new("approval", "Go?").with_data(json!({
            "via": {"path": ["payments", "approvals", "refund"], "prompt": "Go?"}
        }));
        let relay = deep.relay().unwrap();
        assert_eq!(relay.agents(), ["payments", "approvals"]);
        assert_eq!(relay.tool(), "refund");
    }
}
