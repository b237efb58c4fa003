//! Remembered decisions hold for the rest of a run, and a new message supersedes the calls a
//! conversation waits on.

use super::*;

#[tokio::test]
async fn a_remembered_approval_holds_for_the_rest_of_the_run_across_a_halt_and_a_fresh_client() {
    let deleter = Deleter::default();
    let mock = MockLlm::start([
        Reply::tool_call("c1", "delete", json!({"path": "/a"})),
        Reply::tool_call("c2", "delete", json!({"path": "/b"})),
        Reply::text("both gone"),
        Reply::tool_call("c3", "delete", json!({"path": "/c"})),
    ])
    .await
    .unwrap();
    let tk = gated(&deleter);
    let client = on(&mock, Style::Anthropic).build().unwrap();
    let halted = client.run("clean up", &tk).await.unwrap();
    let request = halted.pending.clone().unwrap();

    let text = serde_json::to_string(&halted).unwrap();
    let stored: RunResult = serde_json::from_str(&text).unwrap();
    let fresh = on(&mock, Style::Anthropic).build().unwrap();
    let answer = Answer::ok(&request.id).remember();
    let done = fresh
        .run_with_answer(stored.messages, &request, answer, &tk)
        .await
        .unwrap();
    assert_eq!(
        done.status,
        RunStatus::Done,
        "the second delete did not ask"
    );
    assert_eq!(
        deleter.runs(),
        [json!({"path": "/a"}), json!({"path": "/b"})]
    );

    // Never beyond the run: a new prompt asks again.
    let next = fresh
        .run("and /c", &tk)
        .history(done.messages)
        .await
        .unwrap();
    assert_eq!(next.status, RunStatus::Pending);
    assert_eq!(next.pending.unwrap().data.unwrap()["args"]["path"], "/c");
    assert_eq!(deleter.runs().len(), 2);
}

#[tokio::test]
async fn a_remembered_decline_refuses_later_calls_without_asking() {
    let deleter = Deleter::default();
    let mock = MockLlm::start([
        Reply::tool_call("c1", "delete", json!({"path": "/a"})),
        Reply::tool_call("c2", "delete", json!({"path": "/b"})),
        Reply::text("kept both"),
    ])
    .await
    .unwrap();
    let tk = gated(&deleter);
    let client = on(&mock, Style::OpenAi).build().unwrap();
    let halted = client.run("clean up", &tk).await.unwrap();
    let request = halted.pending.clone().unwrap();
    let no = Answer::decline(&request.id, "declined")
        .with_note("never delete")
        .remember();
    let done = client
        .run_with_answer(through_json(&halted), &request, no, &tk)
        .await
        .unwrap();
    assert_eq!(done.status, RunStatus::Done);
    assert!(deleter.runs().is_empty());
    let (_, told) = &mock.requests()[2].tool_results()[1];
    assert_eq!(
        told,
        r#"declined/expired: Allow delete with {"path":"/b"}? (reason: never delete)"#
    );
}

#[tokio::test]
async fn a_remembered_answer_settles_the_other_waiting_calls_of_its_tool() {
    let (deleter, _mock, client, tk, halted) = halted(Style::Gemini).await;
    let answer = Answer::ok(&halted.waiting[0].id).remember();
    let done = client
        .run_with_answers(through_json(&halted), vec![answer], &tk)
        .await
        .unwrap();
    assert_eq!(done.status, RunStatus::Done);
    assert_eq!(deleter.runs().len(), 2);
}

#[tokio::test]
async fn a_new_message_supersedes_the_calls_a_conversation_waits_on() {
    for style in STYLES {
        let deleter = Deleter::default();
        let mock = MockLlm::start([
            Reply::tool_calls([
                ("c1", "delete", json!({"path": "/a"})),
                ("c2", "delete", json!({"path": "/b"})),
            ]),
            Reply::text("Fine, I left them."),
        ])
        .await
        .unwrap();
        let client = on(&mock, style)
            .store(InMemoryStore::new())
            .build()
            .unwrap();
        let tk = gated(&deleter);
        let chat = client.conversation("files");
        let halted = chat.send("clean up", &tk).await.unwrap();
        assert_eq!(halted.waiting.len(), 2);

        let next = chat.send("actually, leave them", &tk).await.unwrap();
        assert_eq!(next.status, RunStatus::Done, "{style:?}");
        assert_eq!(next.text, "Fine, I left them.");
        assert!(deleter.runs().is_empty());
        let told: Vec<String> = mock.requests()[1]
            .tool_results()
            .into_iter()
            .map(|(_, text)| text)
            .collect();
        assert_eq!(told.len(), 2, "{style:?}: the transcript stays balanced");
        assert!(
            told.iter().all(|t| t.ends_with("(reason: superseded)")),
            "{told:?}"
        );
        assert_eq!(
            mock.requests()[1].prompts().last().map(String::as_str),
            Some("actually, leave them")
        );
        let stale = &halted.waiting[0];
        let err = chat
            .resume(stale, Answer::ok(&stale.id), &tk)
            .await
            .unwrap_err();
        assert!(matches!(err, ClientError::InvalidTranscript(_)), "{err}");
    }
}

#[tokio::test]
async fn a_conversation_resumes_with_several_answers_and_saves_the_thread() {
    let deleter = Deleter::default();
    let mock = two_deletes().await;
    let client = on(&mock, Style::Anthropic).build().unwrap();
    let tk = gated(&deleter);
    let chat = client.conversation("files");
    let halted = chat.send("clean up", &tk).await.unwrap();
    let answers = halted.waiting.iter().map(|r| Answer::ok(&r.id)).collect();
    let done = chat.resume_with_answers(answers, &tk).await.unwrap();
    assert_eq!(done.status, RunStatus::Done);
    assert_eq!(deleter.runs().len(), 2);
    assert_eq!(chat.messages().await.unwrap(), done.messages);
}
