//! Halting, declining and durable resumes on `Style::Responses`, and what the strict stub refuses.

use super::*;

/// A purchase that needs approval, the model reasoning before it asks.
async fn reasoned_purchase() -> MockLlm {
    MockLlm::start([
        Reply::tool_call("call_1", "approve_purchase", json!({"item": "gpu"}))
            .with_reasoning("A purchase: it needs approval first."),
        Reply::text("bought"),
    ])
    .await
    .unwrap()
}

#[tokio::test]
async fn an_approval_through_wait_for_reruns_the_call_and_goes_on() {
    let approver = Approver::default();
    let mock = reasoned_purchase().await;
    let client = client(&mock)
        .wait_for(|req: Request| async move { Answer::ok(req.id) })
        .build()
        .unwrap();
    let tk = Toolkit::builder().tool(approver.tool()).build().unwrap();
    let result = client.run("buy a gpu", &tk).await.unwrap();

    assert_eq!(result.status, RunStatus::Done);
    assert_eq!(result.text, "bought");
    assert_eq!(approver.runs(), 2, "asked, then re-run with the answer");
    assert_eq!(result.tool_calls[0].output, "approved: gpu");
    assert_eq!(
        outputs(&mock.requests()[1]),
        [("call_1".to_owned(), "approved: gpu".to_owned())]
    );
}

#[tokio::test]
async fn a_declined_approval_is_fed_back_with_its_reason() {
    let approver = Approver::default();
    let mock = reasoned_purchase().await;
    let client = client(&mock)
        .wait_for(|req: Request| async move { Answer::decline(req.id, "over budget") })
        .build()
        .unwrap();
    let tk = Toolkit::builder().tool(approver.tool()).build().unwrap();
    let result = client.run("buy a gpu", &tk).await.unwrap();

    assert_eq!(result.status, RunStatus::Done);
    assert_eq!(approver.runs(), 1, "a refusal is not re-run");
    let record = &result.tool_calls[0];
    assert!(record.is_error);
    assert_eq!(
        record.output,
        "declined/expired: Approve purchase of gpu? (reason: over budget)"
    );
    assert_eq!(
        outputs(&mock.requests()[1]),
        [("call_1".to_owned(), record.output.clone())],
        "the model is told what the record says"
    );
}

#[tokio::test]
async fn a_halted_run_parked_as_json_resumes_in_a_fresh_client() {
    let approver = Approver::default();
    let mock = reasoned_purchase().await;
    let tk = Toolkit::builder().tool(approver.tool()).build().unwrap();
    let halted = client(&mock)
        .build()
        .unwrap()
        .run("buy a gpu", &tk)
        .await
        .unwrap();
    assert_eq!(halted.status, RunStatus::Pending);
    let request = halted.pending.clone().expect("the request it halted on");

    let parked = serde_json::to_string(&halted.messages).unwrap();
    let messages: Vec<Message> = serde_json::from_str(&parked).unwrap();
    assert_eq!(
        messages, halted.messages,
        "the provider state survives JSON"
    );

    let fresh = client(&mock).build().unwrap();
    let answer = Answer::ok(request.id.clone());
    let result = fresh
        .run_with_answer(messages, &request, answer, &tk)
        .await
        .expect("the strict stub accepts the replayed reasoning");
    assert_eq!(result.status, RunStatus::Done);
    assert_eq!(result.text, "bought");
    let resumed = input(&mock.requests()[1]);
    let reasoning = resumed
        .iter()
        .position(|item| item["type"] == "reasoning")
        .expect("the reasoning item went back");
    assert_eq!(resumed[reasoning + 1]["type"], "function_call");
    assert_eq!(
        outputs(&mock.requests()[1]),
        [("call_1".to_owned(), "approved: gpu".to_owned())]
    );
}

/// The transcript of `halted` with its calling turn edited by `edit`.
fn edited(halted: &RunResult, edit: impl Fn(&mut Option<Box<ProviderState>>)) -> Vec<Message> {
    let mut messages = halted.messages.clone();
    for message in &mut messages {
        if let Message::Assistant { state, .. } = message {
            edit(state);
        }
    }
    messages
}

#[tokio::test]
async fn the_strict_stub_refuses_calls_whose_reasoning_did_not_come_back() {
    let approver = Approver::default();
    let mock = reasoned_purchase().await;
    let tk = Toolkit::builder().tool(approver.tool()).build().unwrap();
    let client = client(&mock).build().unwrap();
    let halted = client.run("buy a gpu", &tk).await.unwrap();
    let request = halted.pending.clone().unwrap();

    let without_item = edited(&halted, |state| {
        if let Some(ProviderState::Responses { output }) = state.as_deref_mut() {
            output.retain(|item| item["type"] != "reasoning");
        }
    });
    let without_state = edited(&halted, |state| *state = None);
    for messages in [without_item, without_state.clone()] {
        let answer = Answer::ok(request.id.clone());
        let err = client
            .run_with_answer(messages, &request, answer, &tk)
            .await
            .unwrap_err();
        let ClientError::Status { status, excerpt } = &err else {
            panic!("expected the provider's refusal, got {err:?}");
        };
        assert_eq!(*status, 400);
        assert!(
            excerpt.contains("of type 'function_call' was provided without its required 'reasoning' item: 'rs_mock_1'"),
            "{excerpt}"
        );
    }
    assert_eq!(mock.remaining(), 1, "no scripted reply was used");

    let mock = mock.lenient();
    let answer = Answer::ok(request.id.clone());
    let result = client
        .run_with_answer(without_state, &request, answer, &tk)
        .await
        .expect("a lenient stub answers whatever it is sent");
    assert_eq!(result.text, "bought");
    assert_eq!(mock.remaining(), 0);
}
