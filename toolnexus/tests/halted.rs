//! The public rules of a halted run (`toolnexus::halted`), as a door or an engine that
//! does not run the loop reads them, checked against what the loop itself writes and
//! resumes.

use std::time::{Duration, UNIX_EPOCH};

use serde_json::json;
use toolnexus::halted::{Approvals, HaltedTurn};
use toolnexus::testing::{MockLlm, Reply};
use toolnexus::{
    Answer, ClientError, LlmClient, Message, NativeTool, Request, RunResult, RunStatus, ToolCall,
    ToolOutcome, ToolOutput, ToolResult, Toolkit,
};

fn call(id: &str, name: &str, args: serde_json::Value) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        args,
    }
}

/// A turn of three calls: one settled, one waiting on two questions (the first answered
/// by an earlier resume), one waiting on a single question.
fn halted_transcript() -> (Vec<Message>, [ToolCall; 3]) {
    let calls = [
        call("c1", "weather", json!({"city": "Paris"})),
        call("c2", "ship", json!({"to": "Lyon"})),
        call("c3", "pay", json!({"amount": 40})),
    ];
    let done = ToolOutput::settled(&calls[0], &ToolOutcome::classify(ToolResult::ok("sunny")));
    let mut both = ToolOutput::suspended(
        &calls[1],
        vec![
            Request::new("input", "Name?").with_id("name"),
            Request::new("input", "City?").with_id("city"),
        ],
    )
    .expect("two requests");
    both.answered.push(Answer::ok("name"));
    let pay = ToolOutput::suspended(
        &calls[2],
        vec![Request::new("approval", "Pay 40?").with_id("pay")],
    )
    .expect("one request");
    let messages = vec![
        Message::user("ship and pay"),
        Message::Assistant {
            content: String::new(),
            tool_calls: calls.to_vec(),
            state: None,
        },
        Message::ToolResults {
            results: vec![done, both, pay],
        },
    ];
    (messages, calls)
}

#[test]
fn the_halted_turn_tells_settled_from_waiting_and_finds_who_asked() {
    let (messages, calls) = halted_transcript();
    let turn = HaltedTurn::of(&messages).expect("halted");
    assert_eq!(turn.calls(), &calls);
    assert_eq!(turn.results().len(), 3);
    let settled: Vec<&str> = turn.settled().map(|r| r.call_id.as_str()).collect();
    assert_eq!(settled, ["c1"]);
    let waiting: Vec<&str> = turn.waiting().map(|r| r.id.as_str()).collect();
    assert_eq!(
        waiting,
        ["city", "pay"],
        "an answered request waits no more"
    );
    let answered: Vec<&str> = turn.answered().map(|a| a.id.as_str()).collect();
    assert_eq!(answered, ["name"]);
    let waiting_calls: Vec<&str> = turn.waiting_calls().map(|a| a.call.id.as_str()).collect();
    assert_eq!(waiting_calls, ["c2", "c3"]);
    // The call that asked a request, answered or not.
    assert_eq!(turn.asked("name").map(|a| a.call), Some(&calls[1]));
    assert_eq!(
        turn.asked("pay").map(|a| a.placeholder.output.as_str()),
        Some("Pay 40?")
    );
    assert!(turn.asked("nobody").is_none());
    assert_eq!(turn.call("c3"), Some(&calls[2]));
}

#[test]
fn a_transcript_that_did_not_halt_is_refused_saying_why() {
    let (messages, _) = halted_transcript();
    let reason = |messages: &[Message]| match HaltedTurn::of(messages) {
        Err(ClientError::InvalidTranscript(why)) => why,
        other => panic!("not refused: {other:?}"),
    };
    assert_eq!(
        reason(&[]),
        "it does not end with a turn halted on a suspension"
    );
    assert_eq!(
        reason(&messages[..2]),
        "it does not end with a turn halted on a suspension"
    );
    let mut settled = messages.clone();
    if let Some(Message::ToolResults { results }) = settled.last_mut() {
        results.retain(|r| !r.is_pending());
    }
    assert_eq!(
        reason(&settled),
        "it does not end with a turn halted on a suspension"
    );
    let orphaned = vec![messages[0].clone(), messages[2].clone()];
    assert_eq!(
        reason(&orphaned),
        "its tool results do not follow a tool-calling turn"
    );
}

#[test]
fn a_placeholder_is_an_error_to_the_model_and_knows_its_call() {
    let pay = call("c1", "pay", json!({"amount": 40}));
    // A suspension a host built by hand, without the error flag: still a placeholder that
    // is an error to the model, since the call has no result yet.
    let mut asked = ToolResult::pending(Request::new("approval", "Pay?").with_id("r1"));
    asked.is_error = false;
    let placeholder = ToolOutput::settled(&pay, &ToolOutcome::classify(asked));
    assert!(placeholder.is_pending() && placeholder.is_error);
    assert_eq!(
        placeholder.call_digest,
        Some(toolnexus::call_digest("pay", &pay.args))
    );
    assert_eq!(
        Some(placeholder.clone()),
        ToolOutput::suspended(&pay, vec![Request::new("approval", "Pay?").with_id("r1")]),
        "one placeholder, however it is made"
    );
    assert!(placeholder.check_call(&pay).is_ok());
    let renamed = call("c1", "refund", pay.args.clone());
    assert!(matches!(
        placeholder.check_call(&renamed),
        Err(ClientError::CallChanged { request, .. }) if request == "r1"
    ));
    // A gate's request holds the call it approves: another call is not the one approved.
    let gate = Request::new("approval", "Pay?")
        .with_id("g1")
        .with_data(json!({
            "tool": "pay", "args": {"amount": 40}, "argsSchema": {"type": "object"}
        }));
    let mut old = ToolOutput::suspended(&pay, vec![gate]).expect("one request");
    old.call_digest = None;
    assert!(old.check_call(&pay).is_ok());
    let more = call("c1", "pay", json!({"amount": 4000}));
    assert!(
        old.check_call(&more).is_err(),
        "without a digest, the gate's args still tell"
    );
}

#[test]
fn results_are_made_by_the_loops_rule() {
    let (messages, _) = halted_transcript();
    let waiting: Vec<Request> = HaltedTurn::of(&messages)
        .unwrap()
        .waiting()
        .cloned()
        .collect();
    let halted = RunResult::halted(messages.clone(), waiting.clone(), "m");
    assert_eq!(halted.status, RunStatus::Pending);
    assert_eq!(halted.text, "City?");
    assert_eq!(halted.pending.as_ref(), waiting.first());
    assert_eq!(halted.waiting, waiting);
    assert_eq!((halted.turns, halted.limit), (0, None));
    let json = serde_json::to_value(&halted).unwrap();
    let back: RunResult = serde_json::from_value(json).unwrap();
    assert_eq!(back, halted);

    let done = RunResult::finished(vec![Message::user("hi"), Message::assistant("Hello.")], "m");
    assert_eq!(
        (done.status, done.text.as_str()),
        (RunStatus::Done, "Hello.")
    );
    assert_eq!(
        RunResult::halted(done.messages.clone(), Vec::new(), "m"),
        done
    );
}

#[tokio::test]
async fn what_the_loop_writes_reads_back_through_the_public_rules() {
    let tk = Toolkit::builder()
        .tool(NativeTool::of(
            "approve",
            "Asks before buying",
            json!({"type": "object", "properties": {"item": {"type": "string"}}}),
            |args: serde_json::Value, ctx: toolnexus::ToolContext| async move {
                match ctx.answer {
                    Some(a) if a.ok => ToolResult::ok(format!("bought {}", args["item"])),
                    Some(_) => ToolResult::error("declined"),
                    None => ToolResult::pending(Request::new("approval", "Buy?")),
                }
            },
        ))
        .build()
        .unwrap();
    let stub = MockLlm::start([
        Reply::tool_call("call_1", "approve", json!({"item": "gpu"})),
        Reply::text("Bought."),
    ])
    .await
    .expect("stub");
    let client = LlmClient::builder()
        .base_url(stub.base_url())
        .model("m")
        .api_key("k")
        .build()
        .unwrap();
    let run = client.run("buy a gpu", &tk).await.unwrap();
    let turn = HaltedTurn::of(&run.messages).expect("the loop's halt reads as one");
    let waiting: Vec<Request> = turn.waiting().cloned().collect();
    assert_eq!(waiting, run.waiting);
    let asked = turn.asked(&waiting[0].id).expect("its call");
    assert_eq!(asked.call.name, "approve");
    assert!(asked.placeholder.check_call(asked.call).is_ok());
    // The result a host would make of the transcript is the loop's, but for what the run
    // counted.
    let made = RunResult::halted(run.messages.clone(), waiting.clone(), "m");
    assert_eq!(
        RunResult {
            tool_calls: run.tool_calls.clone(),
            turns: run.turns,
            usage: run.usage,
            ..made
        },
        run
    );
    let resumed = client
        .run_with_answer(
            run.messages.clone(),
            &waiting[0],
            Answer::ok(&waiting[0].id),
            &tk,
        )
        .await
        .unwrap();
    assert_eq!(resumed.status, RunStatus::Done);
    assert!(
        HaltedTurn::of(&resumed.messages).is_err(),
        "nothing waits any more"
    );
}

#[test]
fn a_deadline_is_read_one_way() {
    let due = Request::new("approval", "Pay?").with_expires_at("2026-07-28T19:00:00+02:00");
    assert_eq!(
        due.expiry(),
        Ok(Some(UNIX_EPOCH + Duration::from_secs(1_785_258_000)))
    );
    assert_eq!(Request::new("approval", "Pay?").expiry(), Ok(None));
    let vague = Request::new("approval", "Pay?")
        .with_id("r1")
        .with_expires_at("next tuesday");
    let refused = vague.expiry().expect_err("not a date-time");
    assert_eq!(refused.request, "r1");
    assert_eq!(refused.value, "next tuesday");
    assert!(refused.to_string().contains("RFC 3339"), "{refused}");
}

#[test]
fn approvals_are_read_as_written() {
    let so_far = Approvals {
        count: 1,
        quorum: 2,
        by: vec!["ada@example.com".into()],
    };
    let shown = Request::new("approval", "Pay?")
        .with_data(json!({"responders": ["group:finance"], "quorum": 2}))
        .with_approvals(&so_far);
    assert_eq!(shown.approvals(), Some(so_far.clone()));
    assert_eq!(
        shown.data.as_ref().unwrap()["approvals"],
        json!({"count": 1, "quorum": 2, "by": ["ada@example.com"]})
    );
    assert_eq!(shown.rule().unwrap().quorum, 2, "the rule is untouched");
    assert_eq!(so_far.to_string(), "1 of 2 approvals (ada@example.com)");
    let odd = Request::new("approval", "Pay?").with_data(json!({"approvals": "half"}));
    assert_eq!(odd.approvals(), None);
    let text = Request::new("approval", "Pay?").with_data(json!("not an object"));
    assert_eq!(text.clone().with_approvals(&so_far), text);
}
