//! The suspension flows on Gemini: approvals, declines, a halted run resumed from text, dropped
//! signatures, and calls without ids paired by order.

use super::*;

/// A client that approves (or declines) through `wait_for`, on the one-call purchase script.
async fn purchase_with(answer: fn(String) -> Answer) -> (MockLlm, Approver, RunResult) {
    let approver = Approver::default();
    let mock = purchase_mock().await;
    let client = gemini(&mock)
        .wait_for(move |req: Request| std::future::ready(answer(req.id)))
        .build()
        .unwrap();
    let tk = Toolkit::builder().tool(approver.tool()).build().unwrap();
    let result = client.run("buy a gpu", &tk).await.unwrap();
    (mock, approver, result)
}

fn fed_back(request: &RecordedRequest) -> Value {
    contents(request).last().unwrap()["parts"][0]["functionResponse"].clone()
}

#[tokio::test]
async fn an_approval_through_wait_for_reruns_the_call() {
    let (mock, approver, result) = purchase_with(Answer::ok).await;
    assert_eq!(result.status, RunStatus::Done);
    assert_eq!(result.text, "bought");
    assert_eq!(approver.runs(), 2);
    assert_eq!(result.tool_calls[0].output, "approved: gpu");
    assert_eq!(
        fed_back(&mock.requests()[1]),
        json!({"id": "call_1", "name": "approve_purchase", "response": {"output": "approved: gpu"}})
    );
}

#[tokio::test]
async fn a_decline_goes_back_as_the_calls_error() {
    let (mock, approver, result) = purchase_with(|id| Answer::decline(id, "over budget")).await;
    assert_eq!(result.status, RunStatus::Done);
    assert_eq!(approver.runs(), 1);
    let record = &result.tool_calls[0];
    assert!(record.is_error);
    assert_eq!(
        fed_back(&mock.requests()[1]),
        json!({"id": "call_1", "name": "approve_purchase", "response": {"error": record.output}})
    );
}

#[tokio::test]
async fn a_halted_run_persisted_as_text_resumes_in_a_fresh_client() {
    let approver = Approver::default();
    let mock = MockLlm::start([
        Reply::tool_call("call_1", "approve_purchase", json!({"item": "gpu"}))
            .with_reasoning("A purchase needs approval first."),
        Reply::text("bought"),
    ])
    .await
    .unwrap();
    let saved = {
        let client = gemini(&mock)
            .system_prompt("You run a shop.")
            .build()
            .unwrap();
        let tk = Toolkit::builder().tool(approver.tool()).build().unwrap();
        let halted = client.run("buy a gpu", &tk).await.unwrap();
        assert_eq!(halted.status, RunStatus::Pending);
        (
            serde_json::to_string(&halted.messages).unwrap(),
            serde_json::to_string(halted.pending.as_ref().unwrap()).unwrap(),
        )
    };
    let messages: Vec<Message> = serde_json::from_str(&saved.0).unwrap();
    let request: Request = serde_json::from_str(&saved.1).unwrap();
    let client = gemini(&mock)
        .system_prompt("You run a shop.")
        .build()
        .unwrap();
    let tk = Toolkit::builder().tool(approver.tool()).build().unwrap();
    let answer = Answer::ok(request.id.clone());
    let result = client
        .run_with_answer(messages, &request, answer, &tk)
        .await
        .expect("the strict stub accepts the resumed turn, signature and all");

    assert_eq!(result.status, RunStatus::Done);
    assert_eq!(result.text, "bought");
    assert_eq!(approver.runs(), 2);
    let requests = mock.requests();
    let resumed = &requests[1];
    assert_eq!(
        resumed.body["systemInstruction"],
        json!({"parts": [{"text": "You run a shop."}]})
    );
    let sent = contents(resumed);
    let roles: Vec<&str> = sent.iter().map(|c| c["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "model", "user"]);
    assert!(sent[1]["parts"][1]["thoughtSignature"].is_string());
    assert_eq!(fed_back(resumed)["response"]["output"], "approved: gpu");
}

#[tokio::test]
async fn a_dropped_signature_is_refused_unless_the_stub_is_lenient() {
    // A hook that forgets every turn's provider state, as a careless host would.
    let forget = |mut call: LlmCall| async move {
        for message in &mut call.messages {
            if let Message::Assistant { state, .. } = message {
                *state = None;
            }
        }
        call
    };
    let script = || {
        [
            Reply::tool_call("call_1", "get_weather", json!({"city": "Oslo"}))
                .with_reasoning("Ask the tool."),
            Reply::text("Cold."),
        ]
    };
    let mock = MockLlm::start(script()).await.unwrap();
    let client = gemini(&mock).before_llm(forget).build().unwrap();
    let err = client.run("Oslo?", &weather_toolkit()).await.unwrap_err();
    let ClientError::Status {
        status: 400,
        excerpt,
    } = &err
    else {
        panic!("not refused: {err:?}")
    };
    assert!(
        excerpt.starts_with("INVALID_ARGUMENT: Function call is missing a thought_signature"),
        "{excerpt}"
    );
    assert!(excerpt.contains("default_api:get_weather"), "{excerpt}");

    let mock = MockLlm::start(script()).await.unwrap().lenient();
    let client = gemini(&mock).before_llm(forget).build().unwrap();
    let result = client.run("Oslo?", &weather_toolkit()).await.unwrap();
    assert_eq!(result.text, "Cold.");
}

#[tokio::test]
async fn calls_without_ids_pair_with_their_results_by_order() {
    // Scripted without ids, the stub sends the calls as pre-3 models do.
    let mock = MockLlm::start([
        Reply::tool_calls([
            ("", "get_weather", json!({"city": "Oslo"})),
            ("", "get_weather", json!({"city": "Bergen"})),
        ]),
        Reply::text("Cold in both."),
    ])
    .await
    .unwrap();
    let client = gemini(&mock).build().unwrap();
    let result = client.run("Norway?", &weather_toolkit()).await.unwrap();
    assert_eq!(result.text, "Cold in both.");
    let ids: Vec<&str> = result.tool_calls.iter().map(|c| c.id.as_str()).collect();
    assert!(
        ids.iter().all(|id| !id.is_empty()) && ids[0] != ids[1],
        "{ids:?}"
    );
    let requests = mock.requests();
    let sent = contents(&requests[1]);
    for part in sent[1]["parts"].as_array().unwrap() {
        assert!(part["functionCall"].get("id").is_none(), "{part}");
    }
    let outputs: Vec<&Value> = sent[2]["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            assert!(p["functionResponse"].get("id").is_none(), "{p}");
            &p["functionResponse"]["response"]["output"]
        })
        .collect();
    assert_eq!(
        outputs,
        [&json!("sunny in Oslo"), &json!("sunny in Bergen")]
    );
}
