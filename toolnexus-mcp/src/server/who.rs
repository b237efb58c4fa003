//! Who is calling, and which questions the caller may not settle on their own word: a
//! door identifies its caller; whether that caller may answer a question is the inbox's
//! to judge, and a question some rule limits never takes the caller's answer otherwise.

use rmcp::service::{RequestContext, RoleServer};
use toolnexus::Request;

use super::McpServer;
use super::tasks::Starter;

/// Who the inbox records as answering for a caller no sign-in told apart: a stand-in,
/// never counted as a person toward a quorum.
#[cfg(feature = "inbox")]
pub(super) const DEFAULT_RESPONDER: &str = "mcp client";

impl McpServer {
    /// Who starts a task through this request: the person the server identifies
    /// ([`answering_as`](Self::answering_as)), whom the task then belongs to.
    pub(super) fn starter(&self, context: &RequestContext<RoleServer>) -> Starter {
        #[cfg(feature = "inbox")]
        return Some(toolnexus_inbox::Starter::of(&self.answering_as(context)));
        #[cfg(not(feature = "inbox"))]
        {
            let _ = context;
            None
        }
    }

    /// Whether the caller behind this request started the task `starter` started (a task
    /// that names no one is anyone's).
    pub(super) fn started(&self, starter: &Starter, context: &RequestContext<RoleServer>) -> bool {
        let Some(starter) = starter else {
            return true;
        };
        #[cfg(feature = "inbox")]
        return starter.is(&self.answering_as(context));
        #[cfg(not(feature = "inbox"))]
        {
            let _ = context;
            match *starter {}
        }
    }

    /// The person the identify hook found behind this request, if it found one.
    #[cfg(feature = "inbox")]
    pub(super) fn identified(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> Option<toolnexus_inbox::Person> {
        if !self.inner.admission.identifies() {
            return None;
        }
        let parts = context.extensions.get::<http::request::Parts>()?;
        parts
            .extensions
            .get::<super::http::Identified>()
            .map(|who| who.0.clone())
    }

    /// Who answers through this request, as the inbox is told: the person identified, else
    /// the configured [`responder`](super::McpServerBuilder::responder) (by default a
    /// stand-in, which no rule names and no quorum counts).
    #[cfg(feature = "inbox")]
    pub(super) fn answering_as(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> toolnexus_inbox::Person {
        if let Some(who) = self.identified(context) {
            return who;
        }
        let http = context.extensions.get::<http::request::Parts>().is_some();
        match (self.inner.admission.identifies(), &self.inner.kept) {
            // A hook that knew no one: never the responder, which stands only for a client
            // no sign-in could tell apart.
            (true, _) if http => toolnexus_inbox::Person::stand_in(DEFAULT_RESPONDER),
            (_, Some(kept)) => kept.responder().clone(),
            _ => toolnexus_inbox::Person::stand_in(DEFAULT_RESPONDER),
        }
    }

    /// Who may answer `request`, in words, when not just anyone may: the request names its
    /// responders or a quorum above one (or writes either so that it cannot be read), or,
    /// with an inbox, the inbox's rules name them. `None` when the caller's own answer
    /// settles it, as it always did.
    pub(super) fn ruled(&self, request: &Request) -> Option<String> {
        if let Some(own) = own_rule(request) {
            return Some(own);
        }
        #[cfg(feature = "inbox")]
        if let Some(kept) = &self.inner.kept
            && let Some(list) = kept.inbox().responders_of(request)
        {
            let names: Vec<String> = list.iter().map(ToString::to_string).collect();
            return Some(match names.is_empty() {
                true => "the people the inbox's rules name".to_owned(),
                false => names.join(", "),
            });
        }
        None
    }

    /// The first of `requests` some rule limits, with who may answer it.
    pub(super) fn first_ruled<'r>(&self, requests: &'r [Request]) -> Option<(&'r Request, String)> {
        requests
            .iter()
            .find_map(|request| self.ruled(request).map(|who| (request, who)))
    }
}

/// The rule a request writes itself, in words, when it limits who decides
/// ([`Rule::is_restricted`](toolnexus::Rule::is_restricted)): its responders, its quorum
/// above one. A rule written so that it cannot be read is a rule no one can meet, never
/// "anyone".
fn own_rule(request: &Request) -> Option<String> {
    let rule = match request.rule() {
        Ok(rule) => rule,
        Err(e) => return Some(format!("the people its rule names ({e})")),
    };
    if !rule.is_restricted() {
        return None;
    }
    let who = match &rule.responders {
        Some(list) => list.join(", "),
        None => "people".to_owned(),
    };
    Some(match rule.quorum {
        1 => who,
        n => format!("{n} different people among {who}"),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use toolnexus::Request;

    use super::own_rule;

    #[test]
    fn a_request_names_its_rule_or_leaves_it_to_anyone() {
        let pay = |data| Request::new("approval", "Pay?").with_data(data);
        assert_eq!(own_rule(&Request::new("approval", "Pay?")), None);
        assert_eq!(own_rule(&pay(json!({"quorum": 1}))), None);
        let finance = own_rule(&pay(json!({"responders": ["group:finance"]})));
        assert_eq!(finance.as_deref(), Some("group:finance"));
        let two = own_rule(&pay(json!({"quorum": 2}))).unwrap_or_default();
        assert!(two.starts_with("2 different people"), "{two}");
        // Written wrong: a rule nobody can meet, never "anyone".
        assert!(own_rule(&pay(json!({"responders": "group:finance"}))).is_some());
        assert!(own_rule(&pay(json!({"quorum": "2"}))).is_some());
    }
}
