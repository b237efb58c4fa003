//! The reasoning rule in every style, streamed and not, against the strict stub: a tool turn
//! that carries reasoning state gets its next turn accepted, also when the run halts, its
//! transcript goes out as JSON text and a fresh client resumes it. The stub refuses the
//! continuation, as each provider does, when the state did not come back verbatim.

use futures::StreamExt;
use serde_json::json;
use toolnexus::testing::{MockLlm, Reply};
use toolnexus::{
    Answer, ClientError, LlmClient, Message, RunResult, RunStatus, StreamEvent, Toolkit,
};

use crate::support::*;

const THINKING: &str = "A purchase needs a person first.";

/// Runs `prompt` streamed or not; returns the result and the reasoning the stream showed.
async fn run(client: &LlmClient, tk: &Toolkit, stream: bool) -> (RunResult, String) {
    if !stream {
        return (client.run("buy a gpu", tk).await.unwrap(), String::new());
    }
    finish(client.stream("buy a gpu", tk)).await
}

async fn finish(
    events: impl futures::Stream<Item = Result<StreamEvent, ClientError>>,
) -> (RunResult, String) {
    let mut events = std::pin::pin!(events);
    let mut shown = String::new();
    while let Some(event) = events.next().await {
        match event.unwrap() {
            StreamEvent::Reasoning { delta } => shown.push_str(&delta),
            StreamEvent::Done(result) => return (result, shown),
            _ => {}
        }
    }
    panic!("the stream ended without Done")
}

/// A model that thinks before asking for `approve_purchase` of a gpu, then says "bought".
async fn thinking_purchase() -> MockLlm {
    MockLlm::start([
        Reply::tool_call("call_1", "approve_purchase", json!({"item": "gpu"}))
            .with_reasoning(THINKING),
        Reply::text("bought"),
    ])
    .await
    .unwrap()
}

#[tokio::test]
async fn reasoning_survives_a_halt_and_a_fresh_client_in_every_style() {
    for style in STYLES {
        for stream in [false, true] {
            let mock = thinking_purchase().await;
            let approver = Approver::default();
            let tk = Toolkit::builder().tool(approver.tool()).build().unwrap();
            let (halted, shown) = run(&on(&mock, style).build().unwrap(), &tk, stream).await;
            assert_eq!(halted.status, RunStatus::Pending, "{style:?} {stream}");
            if stream {
                assert_eq!(shown, THINKING, "{style:?}: the stream shows the reasoning");
            }
            let reasoning = halted.messages.iter().find_map(Message::reasoning);
            assert_eq!(reasoning.as_deref(), Some(THINKING), "{style:?} {stream}");
            assert!(
                !halted.text.contains(THINKING),
                "reasoning is never the text"
            );

            let stored = serde_json::to_string(&halted.messages).unwrap();
            let request = halted.pending.clone().unwrap();
            let messages: Vec<Message> = serde_json::from_str(&stored).unwrap();
            let fresh = on(&mock, style).build().unwrap();
            let answer = Answer::ok(&request.id);
            let resume = fresh.run_with_answer(messages, &request, answer, &tk);
            let done = if stream {
                finish(resume.stream()).await.0
            } else {
                resume.await.unwrap()
            };
            assert_eq!(done.status, RunStatus::Done, "{style:?} {stream}");
            assert_eq!(done.text, "bought", "{style:?} {stream}");
            assert_eq!(mock.calls(), 2, "{style:?} {stream}: nothing was refused");
        }
    }
}

/// The same continuation with the state dropped from the stored transcript: every style's
/// provider refuses it, and so does the stub, in that provider's words.
#[tokio::test]
async fn a_transcript_that_lost_its_state_is_refused_in_every_style() {
    for style in STYLES {
        let mock = thinking_purchase().await;
        let approver = Approver::default();
        let tk = Toolkit::builder().tool(approver.tool()).build().unwrap();
        let client = on(&mock, style).build().unwrap();
        let halted = client.run("buy a gpu", &tk).await.unwrap();
        let request = halted.pending.clone().unwrap();
        let mut messages = halted.messages.clone();
        for message in &mut messages {
            if let Message::Assistant { state, .. } = message {
                *state = None;
            }
        }
        let refused = client
            .run_with_answer(messages, &request, Answer::ok(&request.id), &tk)
            .await
            .unwrap_err();
        assert!(
            matches!(&refused, ClientError::Status { status: 400, .. }),
            "{style:?}: {refused}"
        );
        assert_eq!(
            approver.runs(),
            2,
            "{style:?}: the tool ran before the model refused"
        );
    }
}
