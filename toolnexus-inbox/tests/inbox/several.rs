//! Runs that wait on several requests at once: parked as one run, each request answered on
//! its own, resumed once with every answer; one call asking several questions at once
//! (`pending_all!`), parked as a row per question; expiry per request; and a database
//! written by the previous schema, with one request per row, opened and resumed by this
//! one.

use serde_json::json;
use std::sync::{Arc, Mutex};
use toolnexus::testing::{MockLlm, Reply};

use toolnexus::{
    pending_all, Answer, NativeTool, Request, RunStatus, ToolContext, ToolResult, Toolkit,
};
use toolnexus_inbox::{InboxError, ParkedState};

use crate::support::{
    both_engines, client, halted, ids_of, toolkit, Effects, InboxDb, Scene, TestDb,
};

both_engines!(
    three_gates_are_answered_in_two_rounds_and_resumed_once,
    edited_arguments_must_fit_the_tools_schema,
    expiry_declines_each_request_and_the_run_goes_on,
    a_database_of_the_previous_schema_is_migrated_and_resumed,
    two_runs_that_say_the_same_park_and_resume_apart,
    one_call_asking_two_questions_parks_two_rows_and_resumes_once_with_both,
);

async fn three_gates_are_answered_in_two_rounds_and_resumed_once(db: TestDb) {
    let s = Scene::gated(db.inbox().await).await;
    let (inbox, client, tk) = (&s.inbox, &s.client, &s.tk);
    let run = s.halted_on_three("tmp").await;
    let ids: Vec<String> = run.waiting.iter().map(|r| r.id.clone()).collect();
    let id = inbox.park(&run).await.unwrap();
    assert_eq!(id, ids[0], "the run is known by its first request");
    assert!(matches!(inbox.park(&run).await, Err(InboxError::AlreadyParked(i)) if i == id));

    for (i, request) in run.waiting.iter().enumerate() {
        let parked = inbox.get(&request.id).await.unwrap().expect("each request");
        assert_eq!(&parked.request, request);
        assert_eq!(parked.request.gated_tool(), Some("delete"));
        assert_eq!(
            (parked.state, parked.run_state),
            (ParkedState::Waiting, ParkedState::Waiting)
        );
        assert_eq!((parked.run.as_str(), &parked.requests), (id.as_str(), &ids));
        assert_eq!(parked.tool.as_deref(), Some("delete"));
        let file = ["a", "b", "c"][i];
        assert_eq!(parked.args, Some(json!({"path": format!("tmp/{file}")})));
    }
    let together = ids_of(&inbox.run_requests(&ids[2]).await.unwrap());
    assert_eq!(
        together, ids,
        "any request leads to the run's, in call order"
    );
    assert_eq!(inbox.waiting().await.unwrap().len(), 3);

    // The first round: two of the three. The run waits on for the last.
    inbox.answer_as(Answer::ok(&ids[0]), "ada").await.unwrap();
    inbox
        .answer_as(
            Answer::decline(&ids[2], "declined").with_note("keep it"),
            "bob",
        )
        .await
        .unwrap();
    assert!(inbox.resume_next(client, tk).await.unwrap().is_none());
    assert!(matches!(
        inbox.resume(&id, client, tk).await,
        Err(InboxError::NotAnswered(open)) if open == ids[1]
    ));
    let first = inbox.get(&ids[0]).await.unwrap().unwrap();
    assert_eq!(
        (first.state, first.run_state),
        (ParkedState::Answered, ParkedState::Waiting)
    );
    assert_eq!(first.answered_by.as_deref(), Some("ada"));
    let still = ids_of(&inbox.waiting().await.unwrap());
    assert_eq!(still, [ids[1].clone()]);
    assert!(matches!(
        inbox.answer(Answer::decline(&ids[0], "declined")).await,
        Err(InboxError::NotWaiting {
            state: ParkedState::Answered,
            ..
        })
    ));
    assert_eq!(
        (s.effects.total(), s.llm.calls()),
        (0, 1),
        "nothing ran yet"
    );

    // The second round: the last one, with edited arguments; now the run is answered.
    let edited = Answer::ok(&ids[1]).with_args(json!({"path": "tmp/b-copy", "keep_days": 7}));
    inbox.answer(edited.clone()).await.unwrap();
    for request in &ids {
        let parked = inbox.get(request).await.unwrap().unwrap();
        assert_eq!(parked.run_state, ParkedState::Answered, "{request}");
    }
    let resumed = inbox
        .resume_next(client, tk)
        .await
        .unwrap()
        .expect("the run");
    assert_eq!((resumed.id.as_str(), resumed.attempt), (id.as_str(), 1));
    assert_eq!(resumed.answers.len(), 3);
    assert_eq!(resumed.answers[1], edited);
    assert_eq!(resumed.result.status, RunStatus::Done);
    let text = &resumed.result.text;
    assert!(
        text.starts_with("deleted tmp/a | deleted tmp/b-copy"),
        "{text}"
    );
    assert!(
        text.contains("declined") && text.contains("keep it"),
        "{text}"
    );
    assert_eq!(
        (
            s.effects.count("tmp/a"),
            s.effects.count("tmp/b-copy"),
            s.effects.count("tmp/b")
        ),
        (1, 1, 0)
    );
    assert_eq!((s.effects.count("tmp/c"), s.llm.calls()), (0, 2));

    for request in &ids {
        let parked = inbox.get(request).await.unwrap().unwrap();
        assert_eq!((parked.state, parked.attempts), (ParkedState::Done, 1));
        assert_eq!(parked.result.as_ref(), Some(&resumed.result));
    }
    assert!(inbox.resume_next(client, tk).await.unwrap().is_none());
    assert!(matches!(
        inbox.resume(&ids[2], client, tk).await,
        Err(InboxError::Finished {
            state: ParkedState::Done,
            ..
        })
    ));
}

async fn edited_arguments_must_fit_the_tools_schema(db: TestDb) {
    let s = Scene::gated(db.inbox().await).await;
    let run = s.halted_on_three("var").await;
    s.inbox.park(&run).await.unwrap();
    let gate = &run.waiting[1].id;
    let misfit = Answer::ok(gate).with_args(json!({"path": "var/b", "keep_days": -1}));
    match s.inbox.answer(misfit).await {
        Err(InboxError::InvalidAnswer { field, reason }) => {
            assert_eq!(field.as_deref(), Some("keep_days"), "{reason}");
        }
        other => panic!("a misfit is refused, naming its field: {other:?}"),
    }
    let missing = Answer::ok(gate).with_args(json!({"keep_days": 1}));
    assert!(matches!(
        s.inbox.answer(missing).await,
        Err(InboxError::InvalidAnswer { field: Some(f), .. }) if f == "path"
    ));
    let parked = s.inbox.get(gate).await.unwrap().unwrap();
    assert_eq!((parked.state, parked.answer), (ParkedState::Waiting, None));
    s.inbox
        .answer(Answer::ok(gate).with_args(json!({"path": "var/b", "keep_days": 0})))
        .await
        .unwrap();
    assert_eq!(
        s.inbox.get(gate).await.unwrap().unwrap().state,
        ParkedState::Answered
    );
}

/// `approve_until(until)`: asks for an approval that lapses at `until`.
fn lapsing_toolkit() -> Toolkit {
    let tool = NativeTool::of(
        "approve_until",
        "Asks for an approval that lapses",
        json!({"type": "object", "properties": {"until": {"type": "string"}}, "required": ["until"]}),
        |args, ctx| async move {
            match ctx.answer {
                Some(a) if a.ok => ToolResult::ok("approved"),
                Some(_) => ToolResult::error("not approved"),
                None => ToolResult::pending(
                    Request::new("approval", "Approve?")
                        .with_expires_at(args["until"].as_str().unwrap_or_default()),
                ),
            }
        },
    );
    Toolkit::builder().tool(tool).build().unwrap()
}

async fn expiry_declines_each_request_and_the_run_goes_on(db: TestDb) {
    let inbox = db.inbox().await;
    let llm = MockLlm::start([
        Reply::tool_calls([
            (
                "c1",
                "approve_until",
                json!({"until": "2001-01-01T00:00:00Z"}),
            ),
            (
                "c2",
                "approve_until",
                json!({"until": "2999-01-01T00:00:00Z"}),
            ),
            (
                "c3",
                "approve_until",
                json!({"until": "2002-01-01T00:00:00Z"}),
            ),
        ]),
        Reply::text("Two lapsed."),
    ])
    .await
    .unwrap();
    let client = client(&llm);
    let tk = lapsing_toolkit();
    let run = client.run("approve three", &tk).await.unwrap();
    let ids: Vec<String> = run.waiting.iter().map(|r| r.id.clone()).collect();
    assert_eq!(ids.len(), 3);
    let id = inbox.park(&run).await.unwrap();

    assert!(matches!(
        inbox.answer(Answer::ok(&ids[0])).await,
        Err(InboxError::Expired(i)) if i == ids[0]
    ));
    assert_eq!(inbox.expire_due().await.unwrap(), 2, "each lapsed request");
    assert_eq!(inbox.expire_due().await.unwrap(), 0);
    for lapsed in [&ids[0], &ids[2]] {
        let parked = inbox.get(lapsed).await.unwrap().unwrap();
        assert_eq!(parked.answer, Some(Answer::decline(lapsed, "expired")));
        assert_eq!(
            parked.run_state,
            ParkedState::Waiting,
            "one request still open"
        );
    }
    assert!(inbox.resume_next(&client, &tk).await.unwrap().is_none());

    inbox.answer(Answer::ok(&ids[1])).await.unwrap();
    let resumed = inbox.resume(&id, &client, &tk).await.unwrap();
    assert_eq!(resumed.result.text, "Two lapsed.");
    let outputs: Vec<&str> = resumed
        .result
        .tool_calls
        .iter()
        .map(|c| c.output.as_str())
        .collect();
    assert_eq!(outputs.len(), 3, "{outputs:?}");
    assert!(outputs[0].starts_with("declined/expired"), "{outputs:?}");
    assert_eq!(outputs[1], "approved");
    assert!(outputs[2].starts_with("declined/expired"), "{outputs:?}");
}

/// The tables as version 2 of the schema made them: one row per run, keyed by the id of
/// the one request it waited on.
const VERSION_2: &[&str] = &[
    "CREATE TABLE toolnexus_inbox_schema (version BIGINT NOT NULL)",
    "INSERT INTO toolnexus_inbox_schema (version) VALUES (2)",
    "CREATE TABLE toolnexus_inbox_runs (
        id TEXT PRIMARY KEY, agent TEXT NOT NULL, state TEXT NOT NULL, request TEXT NOT NULL,
        messages TEXT NOT NULL, model TEXT NOT NULL, turns BIGINT NOT NULL, tool_name TEXT,
        tool_args TEXT, parked_at BIGINT NOT NULL, expires_at BIGINT, answer TEXT,
        answered_by TEXT, answered_at BIGINT, attempts BIGINT NOT NULL DEFAULT 0,
        lease_until BIGINT, last_error TEXT, result TEXT, next_id TEXT,
        updated_at BIGINT NOT NULL
    )",
    "CREATE INDEX toolnexus_inbox_runs_expiry ON toolnexus_inbox_runs (state, expires_at)",
    "CREATE INDEX toolnexus_inbox_runs_recent ON toolnexus_inbox_runs (updated_at)",
    "CREATE INDEX toolnexus_inbox_runs_claim_order \
     ON toolnexus_inbox_runs (agent, state, answered_at, id)",
    "CREATE INDEX toolnexus_inbox_runs_waiting ON toolnexus_inbox_runs (state, parked_at, id)",
];

async fn a_database_of_the_previous_schema_is_migrated_and_resumed(db: TestDb) {
    // Two halted runs, written as the previous version wrote them: one answered, one not.
    let llm = crate::support::model().await;
    let client = client(&llm);
    let effects = Effects::default();
    let tk = toolkit(&effects);
    let answered = halted(&client, &tk, "gpu").await;
    let waiting = halted(&client, &tk, "cpu").await;
    let mut conn = db.connect().await;
    for statement in VERSION_2 {
        sqlx::query(*statement).execute(&mut conn).await.unwrap();
    }
    let mut old_ids = Vec::new();
    for (run, answer) in [(&answered, true), (&waiting, false)] {
        let request = run.pending.clone().unwrap();
        let stored_answer =
            answer.then(|| serde_json::to_string(&Answer::ok(&request.id)).unwrap());
        sqlx::query(
            "INSERT INTO toolnexus_inbox_runs (id, agent, state, request, messages, model, \
             turns, tool_name, tool_args, parked_at, answer, answered_by, answered_at, \
             attempts, updated_at) \
             VALUES ($1, 'default', $2, $3, $4, 'scripted', 1, 'approve_purchase', $5, 1000, \
             $6, $7, $8, 0, 1000)",
        )
        .bind(&request.id)
        .bind(if answer { "answered" } else { "waiting" })
        .bind(serde_json::to_string(&request).unwrap())
        .bind(serde_json::to_string(&run.messages).unwrap())
        .bind(serde_json::to_string(&run.tool_calls[0].args).unwrap())
        .bind(stored_answer)
        .bind(answer.then_some("ada"))
        .bind(answer.then_some(2000_i64))
        .execute(&mut conn)
        .await
        .unwrap();
        old_ids.push(request.id);
    }
    drop(conn);

    let inbox = db.inbox().await;
    let [done_id, open_id] = [&old_ids[0], &old_ids[1]];
    let before = inbox.get(done_id).await.unwrap().expect("the answered run");
    assert_eq!(
        (before.state, before.run_state),
        (ParkedState::Answered, ParkedState::Answered)
    );
    assert_eq!(
        (&before.run, &before.requests),
        (done_id, &vec![done_id.clone()])
    );
    assert_eq!(before.answered_by.as_deref(), Some("ada"));
    assert_eq!(before.args, Some(json!({"item": "gpu"})));
    let open = inbox.get(open_id).await.unwrap().expect("the waiting run");
    assert_eq!(open.state, ParkedState::Waiting);
    assert_eq!(open.request, waiting.pending.clone().unwrap());

    let resumed = inbox
        .resume_next(&client, &tk)
        .await
        .unwrap()
        .expect("the answered run");
    assert_eq!(resumed.id, *done_id);
    assert_eq!(resumed.result.text, "outcome: approved: gpu");
    inbox.answer(Answer::ok(open_id)).await.unwrap();
    let resumed = inbox.resume(open_id, &client, &tk).await.unwrap();
    assert_eq!(resumed.result.text, "outcome: approved: cpu");
    assert_eq!((effects.count("gpu"), effects.count("cpu")), (1, 1));
    assert!(inbox.waiting().await.unwrap().is_empty());
}

/// A scripted demo run twice into one inbox: the model says the same, with the same call
/// ids, both times. Each run's gates ask with ids of their own run, and each run, loaded
/// from its stored transcript, is settled by its own answers.
async fn two_runs_that_say_the_same_park_and_resume_apart(db: TestDb) {
    let s = Scene::gated(db.inbox().await).await;
    let inbox = &s.inbox;
    let first = s.halted_on_three("tmp").await;
    let second = s.halted_on_three("tmp").await;
    let run_of = |run: &toolnexus::RunResult| {
        let ids: Vec<_> = run.messages.iter().filter_map(|m| m.run_id()).collect();
        assert_eq!(ids.len(), 1, "one user message, stamped with its run");
        ids[0].to_owned()
    };
    assert_ne!(run_of(&first), run_of(&second));
    let ids = |run: &toolnexus::RunResult| -> Vec<String> {
        run.waiting.iter().map(|r| r.id.clone()).collect()
    };
    let (a, b) = (ids(&first), ids(&second));
    assert!(
        a.iter().all(|id| !b.contains(id)),
        "{a:?} and {b:?} share an id"
    );

    assert_eq!(inbox.park(&first).await.unwrap(), a[0]);
    assert_eq!(inbox.park(&second).await.unwrap(), b[0]);
    // The second run's answers do not settle the first: only its own do.
    for id in &b {
        inbox.answer(Answer::ok(id)).await.unwrap();
    }
    let resumed = s.resume_now().await;
    assert_eq!(
        (resumed.id.as_str(), resumed.result.status),
        (b[0].as_str(), RunStatus::Done)
    );
    assert_eq!(s.effects.count("tmp/a"), 1);
    assert_eq!(
        inbox.get(&a[0]).await.unwrap().unwrap().state,
        ParkedState::Waiting
    );
    s.assert_nothing_to_resume().await;

    for id in &a {
        inbox.answer(Answer::decline(id, "declined")).await.unwrap();
    }
    let resumed = s.resume_now().await;
    assert_eq!(
        (resumed.id.as_str(), resumed.result.status),
        (a[0].as_str(), RunStatus::Done)
    );
    assert_eq!(
        ["tmp/a", "tmp/b", "tmp/c"].map(|f| s.effects.count(f)),
        [1, 1, 1],
        "the approved run deleted each file once, the declined one nothing"
    );
}

/// `book(city)`: asks at once for the dates and for a manager's approval; books with both
/// answers once re-run. Keeps the answers of every run it made.
fn booking_toolkit(runs: Arc<Mutex<Vec<Vec<Answer>>>>) -> Toolkit {
    let tool = NativeTool::of(
        "book",
        "Books a trip",
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
        move |args, ctx: ToolContext| {
            runs.lock().unwrap().push(ctx.answers.clone());
            async move {
                let city = args["city"].as_str().unwrap_or("?").to_owned();
                match ctx.answers.as_slice() {
                    [] => pending_all![
                        (kind = "input", prompt = format!("Dates for {city}?")),
                        (
                            kind = "approval",
                            prompt = format!("Approve a trip to {city}?")
                        ),
                    ],
                    [dates, approved] => ToolResult::ok(format!(
                        "booked {city} {} ({})",
                        dates
                            .data
                            .as_ref()
                            .map_or("?".to_owned(), |d| d["dates"].to_string()),
                        approved.ok
                    )),
                    other => ToolResult::error(format!("{} answers", other.len())),
                }
            }
        },
    );
    Toolkit::builder().tool(tool).build().unwrap()
}

async fn one_call_asking_two_questions_parks_two_rows_and_resumes_once_with_both(db: TestDb) {
    let inbox = db.inbox().await;
    let llm = MockLlm::start([
        Reply::tool_call("c1", "book", json!({"city": "Lisbon"})),
        Reply::text("booked"),
    ])
    .await
    .unwrap();
    let client = client(&llm);
    let runs = Arc::new(Mutex::new(Vec::new()));
    let tk = booking_toolkit(runs.clone());
    let run = client.run("book Lisbon", &tk).await.unwrap();
    assert_eq!(run.status, RunStatus::Pending);
    assert_eq!(run.waiting.len(), 2, "both questions wait: {run:?}");
    let ids: Vec<String> = run.waiting.iter().map(|r| r.id.clone()).collect();

    let id = inbox.park(&run).await.unwrap();
    assert_eq!(id, ids[0], "the run is known by its first request");
    assert_eq!(
        inbox.waiting().await.unwrap().len(),
        2,
        "a row per question"
    );
    let rows = inbox.run_requests(&ids[1]).await.unwrap();
    assert_eq!(ids_of(&rows), ids, "in the order asked");
    for (parked, asked) in rows.iter().zip(&run.waiting) {
        assert_eq!(&parked.request, asked);
        assert_eq!((parked.run.as_str(), &parked.requests), (id.as_str(), &ids));
        // Each question shows the call that asked it, the second as the first.
        assert_eq!(parked.tool.as_deref(), Some("book"));
        assert_eq!(parked.args, Some(json!({"city": "Lisbon"})));
    }

    // One answer: the run waits on for the other, and nothing runs.
    let dates = Answer::ok(&ids[0]).with_data(json!({"dates": "May 3-7"}));
    inbox.answer_as(dates.clone(), "ada").await.unwrap();
    assert!(inbox.resume_next(&client, &tk).await.unwrap().is_none());
    assert!(matches!(
        inbox.resume(&id, &client, &tk).await,
        Err(InboxError::NotAnswered(open)) if open == ids[1]
    ));
    assert_eq!(ids_of(&inbox.waiting().await.unwrap()), [ids[1].clone()]);
    assert_eq!((runs.lock().unwrap().len(), llm.calls()), (1, 1));

    // The other: the run resumes once, and the call re-runs once with both answers.
    inbox.answer_as(Answer::ok(&ids[1]), "bob").await.unwrap();
    let resumed = inbox
        .resume_next(&client, &tk)
        .await
        .unwrap()
        .expect("the run");
    assert_eq!(resumed.id, id);
    assert_eq!(resumed.answers.len(), 2);
    assert_eq!(resumed.result.status, RunStatus::Done);
    assert_eq!(
        resumed.result.tool_calls[0].output,
        r#"booked Lisbon "May 3-7" (true)"#
    );
    let runs = runs.lock().unwrap().clone();
    assert_eq!(runs.len(), 2, "one first run, one re-run");
    assert_eq!(
        runs[1],
        vec![dates, Answer::ok(&ids[1])],
        "in the order asked"
    );
    assert_eq!(llm.calls(), 2);
    assert!(inbox.resume_next(&client, &tk).await.unwrap().is_none());
    for request in &ids {
        let parked = inbox.get(request).await.unwrap().unwrap();
        assert_eq!(parked.run_state, ParkedState::Done, "{request}");
    }
}
