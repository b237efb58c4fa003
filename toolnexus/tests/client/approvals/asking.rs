//! Gates ask before a call runs, with the same id in any process, and several calls wait and
//! are answered at once or in turns; an answer to nothing the transcript holds is refused.

use super::*;

#[tokio::test]
async fn a_gate_asks_with_the_tool_its_arguments_and_their_schema_before_running() {
    for style in STYLES {
        let (deleter, _mock, _client, tk, halted) = halted(style).await;

        assert_eq!(halted.status, RunStatus::Pending, "{style:?}");
        assert!(
            deleter.runs().is_empty(),
            "{style:?}: nothing ran before the answer"
        );
        assert_eq!(halted.waiting.len(), 2, "{style:?}");
        assert_eq!(halted.pending.as_ref(), halted.waiting.first());
        let first = &halted.waiting[0];
        assert_eq!(first.kind, "approval");
        assert!(first.id.starts_with("approval-"), "{}", first.id);
        assert_ne!(first.id, halted.waiting[1].id);
        let data = first.data.as_ref().unwrap();
        assert_eq!(data["tool"], "delete");
        assert_eq!(data["args"], json!({"path": "/a"}));
        assert_eq!(
            data["argsSchema"],
            tk.declarations().next().unwrap().input_schema.clone()
        );
        assert!(
            data.get("schema").is_none(),
            "`schema` stays the typed answers' form"
        );
        assert_eq!(first.gated_tool(), Some("delete"));
        assert_eq!(first.prompt, r#"Allow delete with {"path":"/a"}?"#);
    }
}

#[tokio::test]
async fn the_same_gated_call_asks_with_the_same_id_whatever_process_asks() {
    let deleter = Deleter::default();
    let tk = gated(&deleter);
    let script = || {
        [Reply::tool_calls([
            ("c1", "delete", json!({"path": "/a"})),
            ("c2", "delete", json!({"path": "/b"})),
        ])]
    };
    let one = MockLlm::start(script()).await.unwrap();
    let a = on(&one, Style::OpenAi).build().unwrap();
    let a = a.run("clean up", &tk).await.unwrap();

    // Another process loads the transcript without the second call's placeholder (as one
    // written before every waiting call kept one), so that call asks again: with the same
    // id as it did here.
    let mut before_asking = through_json(&a);
    match before_asking.last_mut() {
        Some(Message::ToolResults { results }) => results.truncate(1),
        other => panic!("the run ends with its placeholders, not {other:?}"),
    }
    let two = MockLlm::start([]).await.unwrap();
    let elsewhere = on(&two, Style::OpenAi).build().unwrap();
    let again = elsewhere
        .run_with_answers(before_asking, vec![Answer::ok(&a.waiting[0].id)], &tk)
        .await
        .unwrap();
    assert_eq!(deleter.runs(), [json!({"path": "/a"})]);
    assert_eq!(
        again.waiting,
        a.waiting[1..],
        "the same call, the same request"
    );

    // A second run that says and is answered exactly the same is another run: its gates
    // ask with ids of their own, which an answer to the first run's never settles.
    let three = MockLlm::start(script()).await.unwrap();
    let b = on(&three, Style::OpenAi).build().unwrap();
    let b = b.run("clean up", &tk).await.unwrap();
    assert!(
        b.waiting.iter().all(|r| !a.waiting.contains(r)),
        "two runs share a request: {:?}",
        b.waiting
    );
}

#[tokio::test]
async fn two_gated_calls_answered_in_one_resume() {
    for style in STYLES {
        let (deleter, mock, _client, tk, halted) = halted(style).await;
        let answers = vec![
            Answer::decline(&halted.waiting[1].id, "keep it"),
            Answer::ok(&halted.waiting[0].id),
        ];
        let fresh = on(&mock, style).build().unwrap();
        let done = fresh
            .run_with_answers(through_json(&halted), answers, &tk)
            .await
            .unwrap();

        assert_eq!(done.status, RunStatus::Done, "{style:?}");
        assert!(done.waiting.is_empty());
        assert_eq!(deleter.runs(), [json!({"path": "/a"})], "{style:?}");
        let sent = mock.requests()[1].tool_results();
        assert_eq!(
            sent,
            [
                ("c1".to_owned(), "deleted /a".to_owned()),
                (
                    "c2".to_owned(),
                    r#"declined/expired: Allow delete with {"path":"/b"}? (reason: keep it)"#
                        .to_owned()
                ),
            ],
            "{style:?}: each answer settled the call whose request it echoes"
        );
        assert_eq!(mock.calls(), 2);
    }
}

#[tokio::test]
async fn two_gated_calls_answered_in_two_resumes() {
    let (deleter, mock, client, tk, halted) = halted(Style::Anthropic).await;
    let (a, b) = (halted.waiting[0].clone(), halted.waiting[1].clone());

    // The second call's answer first: it settles the second call, never the first.
    let once = client
        .run_with_answers(through_json(&halted), vec![Answer::ok(&b.id)], &tk)
        .await
        .unwrap();
    assert_eq!(once.status, RunStatus::Pending);
    assert_eq!(
        once.waiting.as_slice(),
        std::slice::from_ref(&a),
        "the first still waits, on the same request"
    );
    assert_eq!(once.pending.as_ref(), Some(&a));
    assert_eq!(deleter.runs(), [json!({"path": "/b"})]);
    assert_eq!(
        mock.calls(),
        1,
        "the model waits for every result of the turn"
    );
    let records: Vec<&str> = once.tool_calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(records, ["c2"]);

    let twice = client
        .run_with_answer(through_json(&once), &a, Answer::ok(&a.id), &tk)
        .await
        .unwrap();
    assert_eq!(twice.status, RunStatus::Done);
    assert_eq!(
        deleter.runs(),
        [json!({"path": "/b"}), json!({"path": "/a"})]
    );
    assert_eq!(
        mock.requests()[1].tool_results(),
        [
            ("c1".to_owned(), "deleted /a".to_owned()),
            ("c2".to_owned(), "deleted /b".to_owned()),
        ],
        "results go back in call order whatever order they were answered in"
    );
}

#[tokio::test]
async fn an_answer_to_a_request_the_transcript_does_not_hold_is_refused_with_nothing_run() {
    let (deleter, mock, client, tk, halted) = halted(Style::OpenAi).await;

    let stranger = vec![
        Answer::ok(&halted.waiting[0].id),
        Answer::ok("approval-elsewhere"),
    ];
    let err = client
        .run_with_answers(halted.messages.clone(), stranger, &tk)
        .await
        .unwrap_err();
    assert_eq!(
        err,
        ClientError::RequestMismatch("approval-elsewhere".into())
    );

    let id = &halted.waiting[0].id;
    let twice = vec![Answer::ok(id), Answer::decline(id, "no")];
    let err = client
        .run_with_answers(halted.messages.clone(), twice, &tk)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ClientError::InvalidAnswer { request, .. } if request == id),
        "{err}"
    );
    assert!(deleter.runs().is_empty(), "nothing ran");
    assert_eq!(mock.calls(), 1, "nothing was sent");
}
