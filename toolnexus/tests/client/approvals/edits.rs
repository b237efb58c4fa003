//! Approvals that edit the arguments: the edit runs and the model is told, and edits that do not
//! fit the schema or answer a tool's own question are refused with nothing run.

use super::*;

#[tokio::test]
async fn an_approval_with_edited_arguments_runs_them_and_the_model_is_told() {
    for style in STYLES {
        let (deleter, mock, client, tk, halted) = halted(style).await;
        let edited = json!({"path": "/tmp/a", "force": true});
        let answers = vec![
            Answer::ok(&halted.waiting[0].id).with_args(edited.clone()),
            Answer::ok(&halted.waiting[1].id).with_args(json!({"path": "/b"})),
        ];
        let done = client
            .run_with_answers(through_json(&halted), answers, &tk)
            .await
            .unwrap();

        assert_eq!(
            deleter.runs(),
            [edited.clone(), json!({"path": "/b"})],
            "{style:?}"
        );
        let record = &done.tool_calls[0];
        assert_eq!(record.args, edited, "the record shows what ran");
        assert_eq!(record.proposed_args, Some(json!({"path": "/a"})));
        assert_eq!(
            done.tool_calls[1].proposed_args, None,
            "unchanged arguments are no edit"
        );
        let Some(Message::Assistant { tool_calls, .. }) = done.messages.get(1) else {
            panic!("the turn's calls follow the prompt");
        };
        assert_eq!(
            tool_calls[0].args, edited,
            "{style:?}: the transcript shows what ran"
        );
        let (_, told) = &mock.requests()[1].tool_results()[0];
        assert!(told.starts_with("deleted /tmp/a\n\n"), "{told}");
        assert!(told.contains("a person changed the arguments"), "{told}");
        assert!(
            told.contains("force, path"),
            "{style:?}: the changed fields: {told}"
        );
    }
}

#[tokio::test]
async fn edited_arguments_that_do_not_fit_the_schema_are_refused_with_nothing_run() {
    let (deleter, mock, client, tk, halted) = halted(Style::OpenAi).await;
    let request = &halted.waiting[0];

    for (misfit, field) in [
        (json!({"path": ""}), "path"),
        (json!({"force": true}), "path"),
        (json!({"path": "/a", "recursive": true}), "recursive"),
        (json!({"path": "/a", "force": "yes"}), "force"),
    ] {
        let answer = Answer::ok(&request.id).with_args(misfit.clone());
        let checked = request.check_answer(&answer).unwrap_err();
        assert_eq!(checked.field.as_deref(), Some(field), "{misfit}");
        let err = client
            .run_with_answers(halted.messages.clone(), vec![answer], &tk)
            .await
            .unwrap_err();
        let ClientError::InvalidAnswer {
            request: id,
            reason,
        } = &err
        else {
            panic!("{misfit}: {err}");
        };
        assert_eq!(id, &request.id);
        assert!(reason.contains(&format!("`{field}`")), "{reason}");
    }
    assert!(deleter.runs().is_empty());
    assert_eq!(mock.calls(), 1);
}

#[tokio::test]
async fn edits_are_refused_on_a_request_a_tool_asked_itself() {
    let approver = Approver::default();
    let mock = crate::support::purchase_mock().await;
    let client = on(&mock, Style::OpenAi).build().unwrap();
    let tk = Toolkit::builder().tool(approver.tool()).build().unwrap();
    let halted = client.run("buy a gpu", &tk).await.unwrap();
    let request = halted.pending.clone().unwrap();
    assert_eq!(request.gated_tool(), None);
    let edit = Answer::ok(&request.id).with_args(json!({"item": "cpu"}));
    assert_eq!(
        request.check_answer(&edit).unwrap_err().field.as_deref(),
        Some("args")
    );
    let err = client
        .run_with_answer(halted.messages, &request, edit, &tk)
        .await
        .unwrap_err();
    assert!(matches!(err, ClientError::InvalidAnswer { .. }), "{err}");
    assert_eq!(approver.runs(), 1, "the tool was not run again");
}

#[tokio::test]
async fn in_process_a_gate_asks_wait_for_and_a_misfit_edit_runs_nothing() {
    let deleter = Deleter::default();
    let mock = two_deletes().await;
    let asked = Arc::new(Mutex::new(Vec::<Request>::new()));
    let seen = asked.clone();
    let client = on(&mock, Style::OpenAi)
        .wait_for(move |request: Request| {
            seen.lock().unwrap().push(request.clone());
            async move {
                match request.data.as_ref().unwrap()["args"]["path"].as_str() {
                    Some("/a") => Answer::ok(&request.id).with_args(json!({"path": "/a2"})),
                    _ => Answer::ok(&request.id).with_args(json!({"path": 7})),
                }
            }
        })
        .build()
        .unwrap();
    let done = client.run("clean up", &gated(&deleter)).await.unwrap();

    assert_eq!(done.status, RunStatus::Done);
    assert_eq!(asked.lock().unwrap().len(), 2);
    assert_eq!(
        deleter.runs(),
        [json!({"path": "/a2"})],
        "the misfit ran nothing"
    );
    let sent = mock.requests()[1].tool_results();
    assert!(sent[0].1.starts_with("deleted /a2"), "{sent:?}");
    assert!(
        sent[1].1.starts_with(r#"unresolved: Allow delete with {"path":"/b"}? (the edited arguments do not fit: `path`: must be text)"#),
        "{sent:?}"
    );
}
