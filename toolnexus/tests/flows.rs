//! The approval-flow kit of `toolnexus::testing`: scripted approvers, drives inline and
//! durable, crash points and golden transcripts — each shown working, and each shown
//! failing, with a message that says why, on a wrong expectation.

use std::collections::BTreeMap;
use std::future::IntoFuture;
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::{Mutex, PoisonError};

use futures::FutureExt;
use serde_json::json;
use toolnexus::testing::{Approvers, Decision, Driven, MockLlm, Reply, UPDATE_GOLDEN};
use toolnexus::{
    pending, tool, Answer, Answered, LlmClient, LlmClientBuilder, Refusal, RunStatus, Style,
    ToolResult, Toolkit,
};

/// Buys an item once a person approved it
#[tool]
async fn buy(item: String, answer: Option<&Answer>) -> ToolResult {
    match answer {
        Some(a) if a.ok => ToolResult::ok(format!("bought {item}")),
        Some(_) => ToolResult::error("not bought"),
        None => pending!(kind = "approval", prompt = format!("Buy {item}?")),
    }
}

/// Deletes a file
#[tool(approval = "Delete {path}?")]
async fn delete_file(path: String) -> String {
    format!("deleted {path}")
}

/// Purges a folder
#[tool(approval = "Purge {path}?")]
async fn purge(path: String) -> String {
    *PURGED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .entry(path.clone())
        .or_default() += 1;
    format!("purged {path}")
}

/// How many times `purge` ran, per folder: each test purges folders of its own, so tests
/// running at the same time do not count each other's.
static PURGED: Mutex<BTreeMap<String, usize>> = Mutex::new(BTreeMap::new());

fn purged(path: &str) -> usize {
    let purged = PURGED.lock().unwrap_or_else(PoisonError::into_inner);
    purged.get(path).copied().unwrap_or_default()
}

/// Where a parcel goes
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Address {
    /// Postal code
    zip: String,
}

/// Ships the parcel; asks where to
#[tool]
async fn ship(to: Option<Answered<Address>>) -> ToolResult {
    match to {
        Some(to) => ToolResult::ok(format!("shipped to {}", to.zip)),
        None => pending!(kind = "input", prompt = "Where to?", answer = Address),
    }
}

fn toolkit() -> Toolkit {
    Toolkit::builder()
        .tool(Buy)
        .tool(DeleteFile)
        .tool(Ship)
        .tool(Purge)
        .build()
        .expect("the tools are valid")
}

fn on(model: &MockLlm) -> LlmClientBuilder {
    LlmClient::builder()
        .base_url(model.base_url())
        .model("m")
        .api_key("k")
}

/// A model that buys a gpu, deletes /tmp/x, ships, then says it is done.
async fn errands() -> MockLlm {
    MockLlm::start([
        Reply::tool_call("call_1", "buy", json!({"item": "gpu"})),
        Reply::tool_call("call_2", "delete_file", json!({"path": "/tmp/x"})),
        Reply::tool_call("call_3", "ship", json!({})),
        Reply::text("All done."),
    ])
    .await
    .expect("the mock starts")
}

/// The errands, inline or durable, with the approvers given.
async fn run_errands(people: &Approvers, durable: bool) -> Driven {
    run_errands_in(people, durable, Style::OpenAi).await
}

/// The errands, the client speaking `style`.
async fn run_errands_in(people: &Approvers, durable: bool, style: Style) -> Driven {
    let model = errands().await;
    let tk = toolkit();
    let done = if durable {
        let client = on(&model).style(style).build().expect("the client builds");
        people.drive(&client, &tk, "run my errands").await
    } else {
        people
            .drive_inline(on(&model).style(style), &tk, "run my errands")
            .await
    };
    done.expect("the run ends")
}

/// A model that buys a gpu and a cpu in one turn, then says `text`.
async fn two_buys(text: &str) -> MockLlm {
    MockLlm::start([
        Reply::tool_calls([
            ("call_1", "buy", json!({"item": "gpu"})),
            ("call_2", "buy", json!({"item": "cpu"})),
        ]),
        Reply::text(text),
    ])
    .await
    .expect("the mock starts")
}

/// A panic's message, from a `catch_unwind`.
fn message(panic: Box<dyn std::any::Any + Send>) -> String {
    match panic.downcast::<String>() {
        Ok(text) => *text,
        Err(panic) => panic
            .downcast::<&str>()
            .map(|s| (*s).to_owned())
            .unwrap_or_default(),
    }
}

/// Runs `f`, which must panic, and returns its message.
async fn panics<F: std::future::Future>(f: F) -> String {
    match AssertUnwindSafe(f).catch_unwind().await {
        Ok(_) => panic!("expected a panic"),
        Err(panic) => message(panic),
    }
}

#[tokio::test]
async fn approve_edit_and_fill_reach_the_tools_inline_and_durably_in_every_style() {
    let styles = [
        Style::OpenAi,
        Style::Anthropic,
        Style::Responses,
        Style::Gemini,
    ];
    for (durable, style) in styles.into_iter().flat_map(|s| [(false, s), (true, s)]) {
        let people = Approvers::new()
            .tool("buy", Decision::approve())
            .prompt("Delete *?", Decision::edit(json!({"path": "/tmp/y"})))
            .when(|ask| {
                (ask.request.kind == "input").then(|| Decision::fill(json!({"zip": "75001"})))
            });
        let done = run_errands_in(&people, durable, style).await;
        assert_eq!(done.result.status, RunStatus::Done, "{style:?}");
        assert_eq!(done.text(), "All done.");
        assert_eq!(done.output("buy"), Some("bought gpu"));
        let deleted = done.output("delete_file").unwrap_or_default();
        assert!(deleted.starts_with("deleted /tmp/y\n"), "{deleted}");
        assert_eq!(done.output("ship"), Some("shipped to 75001"));
        assert_eq!(done.halts, if durable { 3 } else { 0 });
        people.asked_exactly(["Buy gpu?", "Delete /tmp/x?", "Where to?"]);
        let tools: Vec<_> = done.questions.iter().map(|q| q.tool.as_deref()).collect();
        assert_eq!(tools, [Some("buy"), Some("delete_file"), Some("ship")]);
        assert_eq!(done.prompts(), people.prompts());
    }
}

#[tokio::test]
async fn a_decline_and_an_expiry_reach_the_model_with_their_reasons() {
    for durable in [false, true] {
        let people = Approvers::new()
            .tool("buy", Decision::decline("too dear"))
            .tool("delete_file", Decision::expire())
            .otherwise(Decision::answer_with(Answer::refuse(
                "",
                Refusal::Cancelled,
            )));
        let done = run_errands(&people, durable).await;
        assert_eq!(
            done.output("buy"),
            Some("declined/expired: Buy gpu? (reason: too dear)")
        );
        assert_eq!(
            done.output("delete_file"),
            Some("declined/expired: Delete /tmp/x? (reason: expired)")
        );
        assert_eq!(
            done.output("ship"),
            Some("declined/expired: Where to? (reason: cancelled)")
        );
    }
}

#[tokio::test]
async fn a_durable_drive_tells_which_call_asked_when_a_turn_made_several() {
    let model = two_buys("Bought the cpu.").await;
    let client = on(&model).build().expect("the client builds");
    let tk = toolkit();
    let people = Approvers::new().when(|ask| match ask.args?["item"].as_str()? {
        "gpu" => Some(Decision::decline("not now")),
        _ => Some(Decision::approve()),
    });
    let done = people
        .drive(&client, &tk, "buy both")
        .await
        .expect("the run ends");
    assert_eq!(done.halts, 1, "both questions are answered at one halt");
    let outputs: Vec<_> = done.tool_calls.iter().map(|c| c.output.as_str()).collect();
    assert_eq!(
        outputs,
        ["declined/expired: Buy gpu? (reason: not now)", "bought cpu"]
    );
    people.asked_exactly(["Buy gpu?", "Buy cpu?"]);
}

#[tokio::test]
async fn inline_a_hand_written_request_of_a_turn_of_several_calls_names_no_tool() {
    let model = two_buys("Bought both.").await;
    let tk = toolkit();
    let people = Approvers::new().tool("buy", Decision::approve());
    let failed = panics(
        people
            .drive_inline(on(&model), &tk, "buy both")
            .into_future(),
    )
    .await;
    assert!(
        failed.contains("no approver answers the approval request")
            && failed.contains("match it by prompt, or drive it durably"),
        "{failed}"
    );
    let people = Approvers::new().prompt("Buy *?", Decision::approve());
    let model = two_buys("Bought both.").await;
    let done = people
        .drive_inline(on(&model), &tk, "buy both")
        .await
        .expect("the run ends");
    assert_eq!(done.text(), "Bought both.");
    assert!(done.questions.iter().all(|q| q.tool.is_none()));
    assert_eq!(people.prompts().len(), 2);
}

#[tokio::test]
#[should_panic(
    expected = "no approver answers the approval request \"Buy gpu?\", asked by tool `buy`"
)]
async fn a_question_no_rule_answers_fails_naming_it() {
    let people = Approvers::new().tool("delete_file", Decision::approve());
    run_errands(&people, true).await;
}

#[tokio::test]
async fn asked_exactly_fails_showing_what_was_asked_instead() {
    let people = Approvers::new().otherwise(Decision::approve());
    run_errands(&people, false).await;
    let failed = panics(async { people.asked_exactly(["Buy gpu?", "Where to?"]) }).await;
    assert_eq!(
        failed,
        "the run asked other questions than expected\n\
         expected 2 question(s):\n  1. \"Buy gpu?\"\n  2. \"Where to?\"\n\
         asked 3 question(s):\n  \
         1. approval by buy \"Buy gpu?\" -> approved\n  \
         2. approval by delete_file \"Delete /tmp/x?\" -> approved\n  \
         3. input by ship \"Where to?\" -> approved"
    );
    let failed = panics(async { people.asked_nothing() }).await;
    assert!(
        failed.contains("expected 0 question(s):\n  (nothing)"),
        "{failed}"
    );
}

/// Purges `path` after its approval, the drive stopping after `steps` steps.
async fn crashed_purge(path: &str, steps: usize) -> Driven {
    let model = MockLlm::start([
        Reply::tool_call("call_1", "purge", json!({"path": path})),
        Reply::text("Purged."),
    ])
    .await
    .expect("the mock starts");
    let client = on(&model).build().expect("the client builds");
    let tk = toolkit();
    let people = Approvers::new().tool("purge", Decision::approve());
    let done = people
        .drive(&client, &tk, format!("purge {path}"))
        .crash_after(steps)
        .await
        .expect("the run ends");
    assert_eq!(model.calls(), 2, "no model reply was asked for twice");
    people.asked_exactly([format!("Purge {path}?")]);
    done
}

#[tokio::test]
async fn a_crash_after_any_step_resumes_from_what_was_kept_and_runs_each_effect_once() {
    // The reply, the gate's question, the answer, the purge: a crash after each.
    for steps in 1..=4 {
        let path = format!("/srv/crash-{steps}");
        let done = crashed_purge(&path, steps).await;
        assert_eq!(done.crashes, 1, "crash after step {steps}");
        assert_eq!(purged(&path), 1, "crash after step {steps}");
        assert_eq!(done.text(), "Purged.");
        assert_eq!(
            done.output("purge"),
            Some(format!("purged {path}").as_str())
        );
    }
}

#[tokio::test]
#[should_panic(expected = "crash_after(5) was never reached: the run ended after 5 step(s)")]
async fn a_crash_point_the_run_never_reaches_fails_the_test() {
    crashed_purge("/srv/never", 5).await;
}

fn golden(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name)
}

#[tokio::test]
async fn a_run_matches_its_golden_transcript_and_a_changed_run_shows_the_diff() {
    let approving = Approvers::new().otherwise(Decision::approve());
    let done = run_errands(&approving, true).await;
    done.assert_golden(golden("errands_approved.txt"));
    // Inline, the run asks and settles the same.
    let inline = run_errands(&Approvers::new().otherwise(Decision::approve()), false).await;
    assert_eq!(inline.golden_text(), done.golden_text());

    if std::env::var_os(UPDATE_GOLDEN).is_some() {
        // Updating: every comparison below would write instead of failing.
        return;
    }
    let declining = Approvers::new()
        .tool("buy", Decision::decline("too dear"))
        .otherwise(Decision::approve());
    let changed = run_errands(&declining, true).await;
    let failed = panics(async { changed.assert_golden(golden("errands_approved.txt")) }).await;
    assert!(
        failed.contains("TOOLNEXUS_UPDATE_GOLDEN=1 to accept it"),
        "{failed}"
    );
    assert!(
        failed.contains("\n-   1. approval by buy \"Buy gpu?\" -> approved\n")
            && failed.contains("\n+   1. approval by buy \"Buy gpu?\" -> declined (too dear)\n"),
        "{failed}"
    );

    let missing = panics(async { done.assert_golden(golden("no_such_file.txt")) }).await;
    assert!(missing.contains("no golden file at"), "{missing}");
    assert!(
        missing.contains("status: done"),
        "the run's text is shown: {missing}"
    );
}

/// A model that purges `path` and then reports what came of it.
async fn purging(path: &str) -> MockLlm {
    let path = path.to_owned();
    MockLlm::with_fn(move |req| match req.tool_results().pop() {
        None => Reply::tool_call("call_1", "purge", json!({"path": path})),
        Some((_, output)) => Reply::text(format!("Done: {output}")),
    })
    .await
    .expect("the mock starts")
}

#[tokio::test]
async fn a_replay_from_an_answer_asks_again_there_and_makes_nothing_before_it_twice() {
    let path = "/srv/replay-answer";
    let model = purging(path).await;
    let client = on(&model).build().expect("the client builds");
    let tk = toolkit();
    let finance = Approvers::new().tool("purge", Decision::approve().by("ada@shop.example"));
    let done = finance
        .drive(&client, &tk, "purge it")
        .await
        .expect("the run ends");
    assert_eq!(purged(path), 1);
    let steps: Vec<String> = done.steps().iter().map(ToString::to_string).collect();
    assert_eq!(
        steps,
        [
            "1. model reply calls purge",
            "2. purge asks \"Purge /srv/replay-answer?\"",
            "3. answers: \"Purge /srv/replay-answer?\" -> approved;",
            "4. purge returns \"purged /srv/replay-answer\"",
            "5. model reply \"Done: purged /srv/replay-answer\"",
        ]
    );
    let step = done.step_answering("Purge /srv/replay-answer?");
    assert_eq!(step, 3);

    // What if finance had declined? The reply and the question before step 3 are the
    // recorded ones: the model is asked once more, for its last reply, and only then.
    let calls = model.calls();
    let declining = Approvers::new().tool("purge", Decision::decline("keep it").by("bob"));
    let what_if = done
        .replay_from(step)
        .drive(&declining, &client, &tk)
        .await
        .expect("the replay ends");
    assert_eq!(
        model.calls(),
        calls + 1,
        "only the last reply is asked anew"
    );
    assert_eq!(purged(path), 1, "the declined purge did not run");
    assert_eq!(
        what_if.text(),
        "Done: declined/expired: Purge /srv/replay-answer? (reason: keep it)"
    );
    declining.asked_exactly(["Purge /srv/replay-answer?"]);
    assert_eq!(declining.questions()[0].answered_by, ["bob"]);
    assert_eq!(what_if.run_id, done.run_id, "the same run, so the same ids");
    finance.asked_exactly(["Purge /srv/replay-answer?"]);
}

#[tokio::test]
async fn a_replay_from_a_model_reply_keeps_the_effects_before_it_and_asks_the_new_model() {
    let path = "/srv/replay-reply";
    let model = purging(path).await;
    let tk = toolkit();
    let finance = Approvers::new().otherwise(Decision::approve());
    let done = finance
        .drive(
            &on(&model).build().expect("the client builds"),
            &tk,
            "purge it",
        )
        .await
        .expect("the run ends");
    assert_eq!(purged(path), 1);

    // What if the model had said something else after the purge? Steps 1 to 4 — the
    // reply, the question, the answer, the purge — are taken over; the purge does not
    // run again and nobody is asked again.
    let other = MockLlm::start([Reply::text("Purged, and I am sorry.")])
        .await
        .expect("the mock starts");
    let nobody = Approvers::new();
    let what_if = done
        .replay_from(done.step_of_reply(2))
        .drive(
            &nobody,
            &on(&other).build().expect("the client builds"),
            &tk,
        )
        .await
        .expect("the replay ends");
    assert_eq!(
        purged(path),
        1,
        "the purge before the replayed step ran once"
    );
    assert_eq!(other.calls(), 1);
    assert_eq!(what_if.text(), "Purged, and I am sorry.");
    assert_eq!(what_if.output("purge"), done.output("purge"));
    nobody.asked_nothing();
    assert_eq!(
        what_if.questions, done.questions,
        "the replayed question is kept"
    );
}

#[tokio::test]
async fn a_replay_that_goes_another_way_or_from_no_step_fails_the_test() {
    let path = "/srv/replay-wrong";
    let model = purging(path).await;
    let client = on(&model).build().expect("the client builds");
    let finance = Approvers::new().otherwise(Decision::approve());
    let done = finance
        .drive(&client, &toolkit(), "purge it")
        .await
        .expect("the run ends");

    let failed = panics(async { done.replay_from(9) }).await;
    assert!(
        failed.contains("has no step 9 to replay from; its steps:\n  1. model reply calls purge"),
        "{failed}"
    );
    let failed = panics(async { done.step_answering("Purge /srv/elsewhere?") }).await;
    assert!(failed.contains("no step of run run-1 answered"), "{failed}");

    // A client with a system prompt lays the transcript out otherwise: its steps are not
    // the recorded run's, and the replay says so rather than make them anew unnoticed.
    let other = on(&model)
        .system_prompt("Be brief.")
        .build()
        .expect("the client builds");
    let tk = toolkit();
    let failed = panics(
        done.replay_from(3)
            .drive(&finance, &other, &tk)
            .into_future(),
    )
    .await;
    assert!(
        failed.contains("the run went another way before it"),
        "{failed}"
    );

    let inline = finance
        .drive_inline(on(&model), &toolkit(), "purge it")
        .await
        .expect("the run ends");
    let failed = panics(async { inline.replay_from(1) }).await;
    assert!(failed.contains("keeps no steps to replay"), "{failed}");
}
