//! Answers checked against the form the request carries, and requests that expire.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use toolnexus::testing::{MockLlm, Reply};
use toolnexus::{pending, tool, Answer, Answered, RunStatus, ToolResult, Toolkit};
use toolnexus_inbox::{InboxError, ParkedState};

use crate::support::{both_engines, client, InboxDb, TestDb};

both_engines!(
    a_misfit_answer_names_its_field_and_changes_nothing,
    due_requests_are_declined_as_expired
);

/// Where to ship
#[derive(Debug, Deserialize, JsonSchema)]
struct Shipping {
    /// Postal code
    #[schemars(length(min = 5, max = 5))]
    zip: String,
    express: bool,
}

/// Ships the order once a person has entered an address
#[tool]
async fn ship(order: u64, answer: Option<Answered<Shipping>>) -> ToolResult {
    match answer {
        None => pending!(kind = "input", prompt = "Where to?", answer = Shipping),
        Some(a) => ToolResult::ok(format!(
            "order {order} to {}{}",
            a.zip,
            if a.express { " (express)" } else { "" }
        )),
    }
}

async fn a_misfit_answer_names_its_field_and_changes_nothing(db: TestDb) {
    let inbox = db.inbox().await;
    let llm = MockLlm::start([
        Reply::tool_call("c1", "ship", json!({"order": 7})),
        Reply::text("Shipped."),
    ])
    .await
    .unwrap();
    let client = client(&llm);
    let tk = Toolkit::builder().tool(Ship).build().unwrap();
    let id = inbox
        .park(&client.run("ship 7", &tk).await.unwrap())
        .await
        .unwrap();

    for (data, field) in [
        (json!({"zip": "123", "express": true}), Some("zip")),
        (json!({"zip": "12345"}), Some("express")),
        (json!({"zip": "12345", "express": "yes"}), Some("express")),
        (
            json!({"zip": "12345", "express": true, "gift": 1}),
            Some("gift"),
        ),
        (json!("12345"), None),
    ] {
        let err = inbox
            .answer_as(Answer::ok(&id).with_data(data.clone()), "ada")
            .await
            .unwrap_err();
        match err {
            InboxError::InvalidAnswer { field: f, reason } => {
                assert_eq!(f.as_deref(), field, "{data}: {reason}")
            }
            other => panic!("{data}: {other:?}"),
        }
    }
    // Two misfits are refused together: the first names the field, the reason both.
    let both = Answer::ok(&id).with_data(json!({"zip": "123", "express": "yes"}));
    let expected = toolnexus::form::check_data(
        inbox
            .get(&id)
            .await
            .unwrap()
            .unwrap()
            .request
            .asks()
            .form()
            .unwrap(),
        both.data.as_ref(),
    )
    .unwrap_err();
    assert_eq!(expected.problems.len(), 2);
    let err = inbox.answer_as(both, "ada").await.unwrap_err();
    let InboxError::InvalidAnswer { field, reason } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(field.as_deref(), Some("zip"), "{reason}");
    let shown = err.to_string();
    for problem in &expected.problems {
        assert!(shown.contains(&problem.reason), "{shown}");
    }
    assert!(shown.contains("`express`"), "{shown}");
    let row = inbox.get(&id).await.unwrap().unwrap();
    assert_eq!(
        (row.state, row.answer, row.answered_by),
        (ParkedState::Waiting, None, None)
    );

    // A refusal needs no form; a fitting answer reaches the tool decoded.
    let fits = Answer::ok(&id).with_data(json!({"zip": "12345", "express": true}));
    inbox.answer(fits).await.unwrap();
    let resumed = inbox.resume_next(&client, &tk).await.unwrap().unwrap();
    assert_eq!(
        resumed.result.tool_calls[0].output,
        "order 7 to 12345 (express)"
    );
    assert_eq!(resumed.result.status, RunStatus::Done);
}

/// Asks for approval that lapses at the time given in the arguments
#[tool]
async fn approve_until(until: String, answer: Option<&toolnexus::Answer>) -> ToolResult {
    match answer {
        Some(a) if a.ok => ToolResult::ok("approved"),
        Some(_) => ToolResult::error("not approved"),
        None => pending!(kind = "approval", prompt = "Approve?", expires_at = until),
    }
}

async fn due_requests_are_declined_as_expired(db: TestDb) {
    let inbox = db.inbox().await;
    let llm = MockLlm::start([
        Reply::tool_call(
            "c1",
            "approve_until",
            json!({"until": "2001-01-01T00:00:00Z"}),
        ),
        Reply::tool_call(
            "c2",
            "approve_until",
            json!({"until": "2999-01-01T00:00:00Z"}),
        ),
        Reply::text("Gave up."),
    ])
    .await
    .unwrap();
    let client = client(&llm);
    let tk = Toolkit::builder().tool(ApproveUntil).build().unwrap();
    let past = inbox
        .park(&client.run("a", &tk).await.unwrap())
        .await
        .unwrap();
    let future = inbox
        .park(&client.run("b", &tk).await.unwrap())
        .await
        .unwrap();
    assert!(inbox
        .get(&past)
        .await
        .unwrap()
        .unwrap()
        .expires_at
        .is_some());

    assert!(matches!(
        inbox.answer(Answer::ok(&past)).await,
        Err(InboxError::Expired(i)) if i == past
    ));
    assert_eq!(inbox.expire_due().await.unwrap(), 1);
    assert_eq!(inbox.expire_due().await.unwrap(), 0);
    let row = inbox.get(&past).await.unwrap().unwrap();
    assert_eq!(row.state, ParkedState::Answered);
    assert_eq!(row.answer, Some(Answer::decline(&past, "expired")));
    assert_eq!(
        inbox.get(&future).await.unwrap().unwrap().state,
        ParkedState::Waiting
    );

    // The model is told: the halted call's result says the request expired.
    let resumed = inbox.resume(&past, &client, &tk).await.unwrap();
    let output = &resumed.result.tool_calls[0].output;
    assert!(output.starts_with("declined/expired"), "{output}");
}
