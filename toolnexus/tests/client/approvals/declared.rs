//! How approvals are declared: conditional gates, gates naming no tool, gates in front of tools
//! that ask by themselves, streams telling each waiting call, and a tool declaring its own approval.

use super::*;

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
