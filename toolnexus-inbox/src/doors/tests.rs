//! The wait every door shares, on an in-memory SQLite database: a run waiting on two
//! requests answered as a batch, all or none; resumed once, by whoever gets there; a chain
//! followed to its end; a door's record kept and read back; the records of older releases
//! carried over.

use serde_json::json;
use toolnexus::{Answer, Message, Request, RunResult, RunStatus, ToolCall, ToolOutput, Usage};

use crate::doors::record::Door;
use crate::error::InboxError;
use crate::inbox::Inbox;
use crate::records::audit::AuditKind;
use crate::records::state::ParkedState;

/// A run of the host's own halted on `requests`, one call each.
fn halted(requests: &[Request]) -> RunResult {
    let calls: Vec<ToolCall> = requests
        .iter()
        .enumerate()
        .map(|(i, _)| ToolCall {
            id: format!("c{i}"),
            name: "ship".into(),
            args: json!({"n": i}),
        })
        .collect();
    let placeholders = calls
        .iter()
        .zip(requests)
        .map(|(call, request)| ToolOutput {
            call_id: call.id.clone(),
            name: call.name.clone(),
            output: request.prompt.clone(),
            is_error: true,
            pending: Some(request.clone()),
            pending_more: Vec::new(),
            answered: Vec::new(),
            approval: None,
            trace: None,
            call_digest: None,
            resume: None,
        })
        .collect();
    RunResult {
        status: RunStatus::Pending,
        text: requests[0].prompt.clone(),
        tool_calls: Vec::new(),
        pending: Some(requests[0].clone()),
        waiting: requests.to_vec(),
        limit: None,
        turns: 0,
        usage: Usage::default(),
        messages: vec![
            Message::user("ship two"),
            Message::Assistant {
                content: String::new(),
                tool_calls: calls,
                state: None,
            },
            Message::ToolResults {
                results: placeholders,
            },
        ],
        model: "none".into(),
    }
}

fn two_requests() -> [Request; 2] {
    let form = json!({"schema": {"type": "object",
        "properties": {"zip": {"type": "string", "minLength": 5}}, "required": ["zip"]}});
    [
        Request::new("approval", "Ship the first?").with_id("q1"),
        Request::new("input", "Where to?")
            .with_id("q2")
            .with_data(form),
    ]
}

fn done(messages: Vec<Message>, text: &str) -> RunResult {
    RunResult {
        status: RunStatus::Done,
        text: text.into(),
        pending: None,
        waiting: Vec::new(),
        messages,
        ..halted(&two_requests())
    }
}

#[tokio::test]
async fn a_batch_with_one_refused_answer_records_nothing() {
    let inbox = Inbox::open("sqlite::memory:").await.unwrap();
    let run = inbox.park(&halted(&two_requests())).await.unwrap();
    let trail = inbox.audit(&run).await.unwrap().len();

    let misfit = vec![
        Answer::ok("q1"),
        Answer::ok("q2").with_data(json!({"zip": "12"})),
    ];
    let refused = inbox.answer_all(&run, misfit, "ada").await.unwrap_err();
    assert!(
        matches!(&refused, InboxError::Batch { request, .. } if request == "q2"),
        "{refused}"
    );
    assert!(
        matches!(refused.cause(), InboxError::InvalidAnswer { field: Some(f), .. } if f == "zip")
    );
    assert!(refused.to_string().contains("q2"), "{refused}");
    let requests = inbox.run_requests(&run).await.unwrap();
    assert!(requests.iter().all(|p| p.state == ParkedState::Waiting));
    // Nothing but the refused attempt itself, on the record.
    let after = inbox.audit(&run).await.unwrap();
    let kinds: Vec<AuditKind> = after[trail..].iter().map(|e| e.kind).collect();
    assert_eq!(kinds, [AuditKind::AnswerRefused], "no answer kept");

    let twice = vec![Answer::ok("q1"), Answer::ok("q1")];
    let refused = inbox.answer_all(&run, twice, "ada").await.unwrap_err();
    assert!(matches!(refused.cause(), InboxError::AnsweredTwice(id) if id == "q1"));

    let good = vec![
        Answer::ok("q1"),
        Answer::ok("q2").with_data(json!({"zip": "12345"})),
    ];
    inbox.answer_all("q2", good, "ada").await.unwrap();
    let requests = inbox.run_requests(&run).await.unwrap();
    assert!(requests
        .iter()
        .all(|p| p.run_state == ParkedState::Answered));
    let answered = inbox.audit(&run).await.unwrap();
    assert_eq!(
        answered
            .iter()
            .filter(|e| e.kind == AuditKind::Answered)
            .count(),
        2
    );
}

#[tokio::test]
async fn an_answer_to_another_runs_request_is_refused_in_a_batch() {
    let inbox = Inbox::open("sqlite::memory:").await.unwrap();
    let first = inbox
        .park(&halted(&[Request::new("approval", "A?").with_id("a1")]))
        .await
        .unwrap();
    inbox
        .park(&halted(&[Request::new("approval", "B?").with_id("b1")]))
        .await
        .unwrap();
    let refused = inbox
        .answer_all(&first, vec![Answer::ok("a1"), Answer::ok("b1")], "ada")
        .await
        .unwrap_err();
    assert!(
        matches!(refused.cause(), InboxError::OtherRun { request, run } if request == "b1" && run == "a1"),
        "{refused}"
    );
    assert_eq!(
        inbox.get("a1").await.unwrap().map(|p| p.state),
        Some(ParkedState::Waiting)
    );
}

#[tokio::test]
async fn racing_doors_resume_a_run_once_and_see_one_outcome() {
    let inbox = Inbox::open("sqlite::memory:").await.unwrap();
    let run = inbox.park(&halted(&two_requests())).await.unwrap();
    let good = vec![
        Answer::ok("q1"),
        Answer::ok("q2").with_data(json!({"zip": "12345"})),
    ];
    inbox.answer_all(&run, good, "ada").await.unwrap();

    let settles = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let door = |inbox: Inbox, settles: std::sync::Arc<std::sync::atomic::AtomicUsize>| {
        let run = run.clone();
        async move {
            inbox
                .resume_with_or_await(&run, |messages, answers| async move {
                    settles.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    assert_eq!(answers.len(), 2);
                    Ok(done(messages, "shipped"))
                })
                .await
        }
    };
    let (a, b) = tokio::join!(
        door(inbox.clone(), settles.clone()),
        door(inbox.clone(), settles.clone())
    );
    for outcome in [a.unwrap(), b.unwrap()] {
        assert_eq!(outcome.run_state, ParkedState::Done);
        assert_eq!(outcome.result.map(|r| r.text).as_deref(), Some("shipped"));
    }
    assert_eq!(settles.load(std::sync::atomic::Ordering::SeqCst), 1);

    let again = inbox
        .resume_with_or_await(&run, |_, _| async { unreachable!("a finished run") })
        .await
        .unwrap();
    assert_eq!(again.run_state, ParkedState::Done);
}

#[tokio::test]
async fn a_run_not_yet_answered_is_refused_by_resume_or_await() {
    let inbox = Inbox::open("sqlite::memory:").await.unwrap();
    let run = inbox.park(&halted(&two_requests())).await.unwrap();
    let refused = inbox
        .resume_with_or_await(&run, |_, _| async { unreachable!("nothing is answered") })
        .await
        .unwrap_err();
    assert!(matches!(refused, InboxError::NotAnswered(id) if id == "q1"));
}

#[tokio::test]
async fn follow_reaches_the_run_a_resume_halted_on() {
    let inbox = Inbox::open("sqlite::memory:").await.unwrap();
    let run = inbox
        .park(&halted(&[Request::new("approval", "A?").with_id("a1")]))
        .await
        .unwrap();
    let first = inbox.follow(&run).await.unwrap();
    assert_eq!(
        (first.run.as_str(), first.run_state()),
        ("a1", ParkedState::Waiting)
    );
    assert!(first.halted.is_none());
    assert_eq!(first.open().len(), 1);

    inbox
        .answer_all(&run, vec![Answer::ok("a1")], "ada")
        .await
        .unwrap();
    let next = halted(&[Request::new("approval", "And B?").with_id("b1")]);
    let next_messages = next.messages.clone();
    inbox
        .resume_with_or_await(&run, |_, _| async move { Ok(next) })
        .await
        .unwrap();
    let latest = inbox.follow(&run).await.unwrap();
    assert_eq!(latest.run, "b1");
    assert_eq!(latest.run_state(), ParkedState::Waiting);
    assert_eq!(latest.halted, Some(next_messages));
    assert_eq!(latest.head().request.prompt, "And B?");
    // Whoever may answer the run it became finds the run the chain began with.
    let ada = crate::policy::people::Person::new("ada@example.com");
    assert_eq!(inbox.answerable_chains(&ada).await.unwrap(), ["a1"]);
}

#[tokio::test]
async fn only_those_who_may_answer_find_a_waiting_chain() {
    let inbox = Inbox::builder("sqlite::memory:")
        .responders("approval", ["group:finance"])
        .open()
        .await
        .unwrap();
    let approval = Request::new("approval", "Pay?").with_id("p1");
    inbox.park(&halted(&[approval])).await.unwrap();
    // A question anyone may answer is anyone's to find.
    inbox.park(&halted(&two_requests())).await.unwrap();
    let finance = crate::policy::people::Person::new("fin@example.com").groups(["finance"]);
    let eve = crate::policy::people::Person::new("eve@example.com");
    assert_eq!(
        inbox.answerable_chains(&finance).await.unwrap(),
        ["p1", "q1"]
    );
    assert_eq!(inbox.answerable_chains(&eve).await.unwrap(), ["q1"]);
}

#[tokio::test]
async fn a_doors_record_reads_back_and_a_misread_one_is_named() {
    #[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
    struct Thread {
        run: Option<String>,
    }
    let inbox = Inbox::open("sqlite::memory:").await.unwrap();
    inbox
        .keep_record(
            Door::AGUI,
            "t1",
            &Thread {
                run: Some("r1".into()),
            },
        )
        .await
        .unwrap();
    let kept = inbox
        .record::<Thread>(Door::AGUI, "t1")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(kept.data.run.as_deref(), Some("r1"));
    assert!(inbox.touch_record(Door::AGUI, "t1").await.unwrap());
    assert!(!inbox.touch_record(Door::MCP, "t1").await.unwrap());

    let misread = inbox.record::<Vec<u8>>(Door::AGUI, "t1").await.unwrap_err();
    assert!(
        matches!(&misread, InboxError::CorruptRecord { door: "agui", id, .. } if id == "t1"),
        "{misread}"
    );
}

#[tokio::test]
async fn notes_of_older_releases_become_door_records() {
    let path = std::env::temp_dir().join(format!("toolnexus-doors-{}.db", std::process::id()));
    let url = format!("sqlite://{}", path.display());
    let inbox = Inbox::open(&url).await.unwrap();
    // Back to the schema before door records (and the votes, delegations, run index and
    // posts after them), with the notes the doors wrote then.
    let pool = &inbox.inner.store.pool;
    for statement in [
        "DROP TABLE toolnexus_inbox_posts",
        "DROP INDEX toolnexus_inbox_runs_next",
        "ALTER TABLE toolnexus_inbox_runs DROP COLUMN requested_by",
        "DROP TABLE toolnexus_inbox_delegations",
        "ALTER TABLE toolnexus_inbox_requests DROP COLUMN votes",
        "DROP TABLE toolnexus_inbox_doors",
        "UPDATE toolnexus_inbox_schema SET version = version - 5",
        "INSERT INTO toolnexus_inbox_notes VALUES ('a2a-task:t1', '{\"n\":1}', 5)",
        "INSERT INTO toolnexus_inbox_notes VALUES ('agui-thread:th1', '{\"n\":2}', 6)",
        "INSERT INTO toolnexus_inbox_notes VALUES ('mcp-task/m1', '{\"n\":3}', 7)",
        "INSERT INTO toolnexus_inbox_notes VALUES ('mine', 'kept', 8)",
    ] {
        sqlx::query(statement).execute(pool).await.unwrap();
    }
    drop(inbox);
    let inbox = Inbox::open(&url).await.unwrap();
    #[derive(serde::Deserialize)]
    struct N {
        n: u8,
    }
    for (door, id, n) in [
        (Door::A2A, "t1", 1),
        (Door::AGUI, "th1", 2),
        (Door::MCP, "m1", 3),
    ] {
        let kept = inbox.record::<N>(door, id).await.unwrap();
        assert_eq!(kept.map(|k| k.data.n), Some(n), "{door} {id}");
    }
    assert_eq!(inbox.note("a2a-task:t1").await.unwrap(), None);
    assert_eq!(inbox.note("mine").await.unwrap().as_deref(), Some("kept"));
    drop(inbox);
    let _ = std::fs::remove_file(&path);
}
