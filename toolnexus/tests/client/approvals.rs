//! Approvals declared in front of tools: gates ask before a call runs, several calls wait
//! at once, answers settle the calls they echo, edits are checked and shown, decisions are
//! remembered for the rest of a run, and a new message supersedes what waits.

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use toolnexus::testing::{MockLlm, Reply};
use toolnexus::{
    Answer, Approval, ClientError, InMemoryStore, LlmClient, Message, NativeTool, Request,
    RunResult, RunStatus, Style, Tool, Toolkit, ToolkitError,
};

use crate::support::{on, steps, Approver, STYLES};

/// `delete`: deletes nothing, but records every path it was run with.
#[derive(Clone, Default)]
struct Deleter {
    ran: Arc<Mutex<Vec<Value>>>,
}

impl Deleter {
    fn tool(&self, name: &str) -> impl Tool + use<> {
        let ran = self.ran.clone();
        NativeTool::of(
            name.to_owned(),
            "Deletes a file",
            json!({"type": "object",
                   "properties": {"path": {"type": "string", "minLength": 1},
                                  "force": {"type": "boolean"}},
                   "required": ["path"]}),
            move |args: Value, _| {
                ran.lock().unwrap().push(args.clone());
                async move { format!("deleted {}", args["path"].as_str().unwrap_or_default()) }
            },
        )
    }

    fn runs(&self) -> Vec<Value> {
        self.ran.lock().unwrap().clone()
    }
}

/// A toolkit of `delete` gated by name.
fn gated(deleter: &Deleter) -> Toolkit {
    Toolkit::builder()
        .tool(deleter.tool("delete"))
        .approval(Approval::tools(["delete"]))
        .build()
        .unwrap()
}

/// The model deletes `/a` and `/b` in one turn, then says `done`.
async fn two_deletes() -> MockLlm {
    MockLlm::start([
        Reply::tool_calls([
            ("c1", "delete", json!({"path": "/a"})),
            ("c2", "delete", json!({"path": "/b"})),
        ]),
        Reply::text("done"),
    ])
    .await
    .unwrap()
}

/// A run of `two_deletes` in `style`, halted on both gates: the deleter, the stub, the
/// client, the toolkit and the halted run.
async fn halted(style: Style) -> (Deleter, MockLlm, LlmClient, Toolkit, RunResult) {
    let deleter = Deleter::default();
    let mock = two_deletes().await;
    let client = on(&mock, style).build().unwrap();
    let tk = gated(&deleter);
    let run = client.run("clean up", &tk).await.unwrap();
    (deleter, mock, client, tk, run)
}

/// A halted run's transcript through JSON text, as a host stores it.
fn through_json(run: &RunResult) -> Vec<Message> {
    let text = serde_json::to_string(&run.messages).unwrap();
    serde_json::from_str(&text).unwrap()
}

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
async fn a_conditional_gate_asks_only_when_its_predicate_holds_and_fails_closed() {
    let deleter = Deleter::default();
    let mock = MockLlm::start([
        Reply::tool_calls([
            ("c1", "rm", json!({"path": "/tmp/x"})),
            ("c2", "rm", json!({"path": "/etc/passwd"})),
            ("c3", "wipe", json!({"path": "/"})),
        ]),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let tk = Toolkit::builder()
        .tool(deleter.tool("rm"))
        .tool(deleter.tool("wipe"))
        .approval(
            Approval::tools(["rm"])
                .when(|args: &Value| !args["path"].as_str().unwrap_or("").starts_with("/tmp/"))
                .prompt(|name: &str, args: &Value| format!("{name} {}?", args["path"])),
        )
        .approval(Approval::tools(["wi*"]).when(|_: &Value| panic!("the predicate broke")))
        .build()
        .unwrap();
    let client = on(&mock, Style::OpenAi).build().unwrap();
    let halted = client.run("tidy", &tk).await.unwrap();
    let prompts: Vec<&str> = halted.waiting.iter().map(|r| r.prompt.as_str()).collect();
    assert_eq!(
        prompts,
        [r#"rm "/etc/passwd"?"#, r#"Allow wipe with {"path":"/"}?"#]
    );
    assert_eq!(
        deleter.runs(),
        [json!({"path": "/tmp/x"})],
        "only the ungated call ran"
    );
}

#[tokio::test]
async fn an_approval_naming_no_tool_is_refused_when_the_toolkit_is_built() {
    let deleter = Deleter::default();
    for pattern in ["remove", "fs__*"] {
        let err = Toolkit::builder()
            .tool(deleter.tool("delete"))
            .approval(Approval::tools([pattern]))
            .build()
            .unwrap_err();
        assert_eq!(err, ToolkitError::UnknownApproval(pattern.to_owned()));
        assert!(err.to_string().contains(pattern));
    }
}

#[tokio::test]
async fn a_gate_sits_in_front_of_a_tool_that_asks_by_itself() {
    let approver = Approver::default();
    let mock = crate::support::purchase_mock().await;
    let client = on(&mock, Style::OpenAi).build().unwrap();
    let tk = Toolkit::builder()
        .tool(approver.tool())
        .approval(Approval::tools(["approve_purchase"]))
        .build()
        .unwrap();
    let gate = client.run("buy a gpu", &tk).await.unwrap();
    let gate_request = gate.pending.clone().unwrap();
    assert_eq!(gate_request.gated_tool(), Some("approve_purchase"));
    assert_eq!(approver.runs(), 0);

    let own = client
        .run_with_answer(
            gate.messages,
            &gate_request,
            Answer::ok(&gate_request.id),
            &tk,
        )
        .await
        .unwrap();
    let own_request = own.pending.clone().unwrap();
    assert_eq!(own_request.prompt, "Approve purchase of gpu?");
    assert_eq!(approver.runs(), 1);
    assert!(
        approver.contexts.lock().unwrap()[0].answer.is_none(),
        "the gate's answer is not the tool's"
    );

    let done = client
        .run_with_answer(own.messages, &own_request, Answer::ok(&own_request.id), &tk)
        .await
        .unwrap();
    assert_eq!(done.status, RunStatus::Done);
    assert_eq!(done.tool_calls[0].output, "approved: gpu");
}

#[tokio::test]
async fn a_stream_tells_each_waiting_call() {
    let deleter = Deleter::default();
    let mock = two_deletes().await;
    let client: LlmClient = on(&mock, Style::Responses).build().unwrap();
    let tk = gated(&deleter);
    let told = steps(client.stream("clean up", &tk)).await;
    let pending: Vec<&String> = told.iter().filter(|l| l.starts_with("pending:")).collect();
    assert_eq!(
        pending,
        [
            r#"pending:Allow delete with {"path":"/a"}?"#,
            r#"pending:Allow delete with {"path":"/b"}?"#
        ]
    );
    assert!(told.last().unwrap().starts_with("done:Pending"), "{told:?}");
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

/// Removes a directory
#[toolnexus::tool(approval(prompt = "Remove {path} and all it holds?", when = recursive))]
async fn rmdir(path: String, recursive: bool) -> String {
    format!("removed {path} (recursive: {recursive})")
}

#[tokio::test]
async fn a_tool_declaring_its_approval_asks_before_its_body_runs() {
    for style in STYLES {
        let mock = MockLlm::start([
            Reply::tool_calls([
                (
                    "c1",
                    "rmdir",
                    json!({"path": "/tmp/empty", "recursive": false}),
                ),
                ("c2", "rmdir", json!({"path": "/srv", "recursive": true})),
            ]),
            Reply::text("done"),
        ])
        .await
        .unwrap();
        let client = on(&mock, style).build().unwrap();
        let tk = Toolkit::builder().tool(Rmdir).build().unwrap();
        let halted = client.run("tidy", &tk).await.unwrap();
        assert_eq!(
            halted.waiting.len(),
            1,
            "{style:?}: only the recursive call asks"
        );
        let request = &halted.waiting[0];
        assert_eq!(request.prompt, "Remove /srv and all it holds?");
        assert_eq!(request.gated_tool(), Some("rmdir"));
        assert_eq!(
            halted.tool_calls[0].output,
            "removed /tmp/empty (recursive: false)"
        );

        let answer =
            Answer::ok(&request.id).with_args(json!({"path": "/srv/tmp", "recursive": true}));
        let done = client
            .run_with_answers(through_json(&halted), vec![answer], &tk)
            .await
            .unwrap();
        assert_eq!(done.status, RunStatus::Done);
        assert!(
            done.tool_calls[0]
                .output
                .starts_with("removed /srv/tmp (recursive: true)"),
            "{style:?}: {}",
            done.tool_calls[0].output
        );
    }
}
