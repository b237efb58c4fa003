//! The questions of a sub-agent's halted run as the calling run asks them, and the
//! answers back as the agent's run takes them.
//!
//! Outward, each request keeps its kind, url, deadline and `data` — its rule (who answers,
//! how many, which edits) and its form — as the agent's run asked it, so whoever judges the
//! answers judges them by the rule the agent's tool set. Its id is the calling call's own
//! ([`request_id`](super::kept::request_id)), its prompt names the agents it came through,
//! and `data.via` holds the path and the prompt as asked ([`Request::relay`]).

use serde_json::{json, Map, Value};

use super::kept::{request_id, Asked};
use crate::halted::HaltedTurn;
use crate::suspension::VIA_KEY;
use crate::{Answer, Request};

/// What shows, between the agents a question came through and the question.
const BETWEEN_AGENTS: &str = " > ";

/// The requests of `turn` (the agent's halted turn) that `waiting` lists, as the calling
/// run asks them, with which stands for which; `Err` says why they cannot be relayed.
pub(super) fn outward(
    agent: &str,
    scope: &str,
    turn: &HaltedTurn<'_>,
    waiting: &[Request],
) -> Result<(Vec<Request>, Vec<Asked>), String> {
    let mut requests = Vec::with_capacity(waiting.len());
    let mut asked = Vec::with_capacity(waiting.len());
    for inner in waiting {
        let Some(by) = turn.asked(&inner.id) else {
            return Err(format!(
                "its run waits on request `{}`, which no call of its halted turn asked",
                inner.id
            ));
        };
        let request = relayed(agent, scope, &by.call.name, inner);
        asked.push(Asked {
            id: request.id.clone(),
            inner: inner.id.clone(),
        });
        requests.push(request);
    }
    Ok((requests, asked))
}

/// `inner`, asked by the agent's tool `tool`, as the calling run asks it.
fn relayed(agent: &str, scope: &str, tool: &str, inner: &Request) -> Request {
    // A request that came through agents of the agent's own run keeps its path, with
    // this agent in front.
    let (path, prompt) = match inner.relay() {
        Some(relay) => {
            let mut path = vec![agent];
            path.extend(relay.path);
            (path, relay.prompt.to_owned())
        }
        None => (vec![agent, tool], inner.prompt.clone()),
    };
    let agents = &path[..path.len() - 1];
    let shown = format!("{}: {prompt}", agents.join(BETWEEN_AGENTS));
    let via = json!({ "path": path, "prompt": prompt });
    let data = match inner.data.clone() {
        Some(Value::Object(mut data)) => {
            data.insert(VIA_KEY.to_owned(), via);
            data
        }
        // No object to carry a rule or a form: the data is kept beside the path.
        other => {
            let mut data = Map::with_capacity(2);
            if let Some(value) = other {
                data.insert("value".to_owned(), value);
            }
            data.insert(VIA_KEY.to_owned(), via);
            data
        }
    };
    Request {
        id: request_id(agent, scope, &inner.id),
        kind: inner.kind.clone(),
        prompt: shown,
        url: inner.url.clone(),
        data: Some(Value::Object(data)),
        expires_at: inner.expires_at.clone(),
    }
}

/// The calling run's `answers` as answers to the agent's own requests. The receipts stay
/// behind: they bind the calling run's request and call, which the calling run has
/// checked; the agent's run would take them for receipts issued for another request.
pub(super) fn inward(asked: &[Asked], answers: Vec<Answer>) -> Result<Vec<Answer>, String> {
    answers
        .into_iter()
        .map(|answer| {
            let Some(to) = asked.iter().find(|a| a.id == answer.id) else {
                return Err(format!(
                    "answer `{}` answers none of its questions",
                    answer.id
                ));
            };
            Ok(Answer {
                id: to.inner.clone(),
                receipts: Vec::new(),
                ..answer
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::{Message, ToolCall, ToolOutput};

    fn halted(call: &str, tool: &str, asked: Vec<Request>) -> Vec<Message> {
        let call = ToolCall {
            id: call.into(),
            name: tool.into(),
            args: json!({"order": "A-7"}),
        };
        let placeholder = ToolOutput::suspended(&call, asked).expect("a request");
        vec![
            Message::user("refund A-7"),
            Message::Assistant {
                content: String::new(),
                tool_calls: vec![call],
                state: None,
            },
            Message::ToolResults {
                results: vec![placeholder],
            },
        ]
    }

    #[test]
    fn a_request_keeps_its_rule_and_form_and_names_the_path() {
        let gate = Request::new("approval", "Refund order A-7?")
            .with_id("approval-1")
            .with_data(json!({
                "tool": "refund", "args": {"order": "A-7"}, "argsSchema": {"type": "object"},
                "responders": ["group:finance"], "quorum": 2
            }))
            .with_expires_at("2030-01-01T00:00:00Z");
        let messages = halted("c1", "refund", vec![gate.clone()]);
        let turn = HaltedTurn::of(&messages).unwrap();
        let (out, asked) =
            outward("payments", "scope", &turn, std::slice::from_ref(&gate)).unwrap();
        let [request] = out.as_slice() else {
            panic!("one request: {out:?}")
        };
        assert_eq!(request.prompt, "payments: Refund order A-7?");
        assert_eq!(request.rule().unwrap(), gate.rule().unwrap());
        assert_eq!(request.expires_at, gate.expires_at);
        let relay = request.relay().unwrap();
        assert_eq!(relay.path, ["payments", "refund"]);
        assert_eq!(relay.prompt, "Refund order A-7?");
        assert_eq!(
            request.gated_tool(),
            None,
            "the agent's run settles its gate"
        );
        assert!(
            request.asks().args_form().is_some(),
            "shown as the gate it is"
        );
        assert_eq!(asked[0].inner, "approval-1");
        assert_eq!(asked[0].id, request.id);

        // Relayed once more, by the agent that called this one.
        let messages = halted("c9", "payments", vec![request.clone()]);
        let turn = HaltedTurn::of(&messages).unwrap();
        let (out, _) = outward("planner", "outer", &turn, std::slice::from_ref(request)).unwrap();
        assert_eq!(out[0].prompt, "planner > payments: Refund order A-7?");
        assert_eq!(
            out[0].relay().unwrap().path,
            ["planner", "payments", "refund"]
        );
        assert_eq!(out[0].rule().unwrap(), gate.rule().unwrap());
    }

    #[test]
    fn answers_go_back_to_the_agents_requests_without_receipts() {
        let asked = vec![Asked {
            id: "payments-1".into(),
            inner: "approval-1".into(),
        }];
        let edited = Answer::ok("payments-1")
            .with_args(json!({"order": "A-8"}))
            .with_note("the other one");
        let back = inward(&asked, vec![edited]).unwrap();
        assert_eq!(back[0].id, "approval-1");
        assert_eq!(back[0].args, Some(json!({"order": "A-8"})));
        assert_eq!(back[0].note(), Some("the other one"));
        let stray = inward(&asked, vec![Answer::ok("other")]).unwrap_err();
        assert_eq!(stray, "answer `other` answers none of its questions");
    }
}
