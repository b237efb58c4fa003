//! The step journal: a resumed run interrupted at each of its steps (its journal failing,
//! or the run dropped while a record is under way, before or after the step is kept) and
//! taken up again by a fresh client with what the journal kept, through JSON: every effect
//! happens once (by the journal, or by its idempotency key when the crash fell between the
//! effect and its record), no recorded reply is requested again, and the run ends as an
//! uninterrupted one does.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use tokio::sync::Notify;
use toolnexus::testing::{MockLlm, Reply};
use toolnexus::{
    Answer, Approval, BoxFuture, ClientError, InMemoryJournal, Journal, JournalError, Message,
    NativeTool, Request, RunResult, RunStatus, Step, StepKey, Style, Tool, ToolContext, ToolResult,
    Toolkit,
};

use crate::support::{on, soon};

/// One attempt of a tool: its name, its arguments and its idempotency key.
type Attempt = (String, Value, Option<String>);

/// Every attempt of every tool.
#[derive(Clone, Default)]
struct Effects(Arc<Mutex<Vec<Attempt>>>);

impl Effects {
    fn tool(&self, name: &'static str) -> impl Tool + use<> {
        let seen = self.0.clone();
        NativeTool::of(
            name,
            "Books or charges something",
            json!({"type": "object"}),
            move |args: Value, ctx: ToolContext| {
                seen.lock()
                    .unwrap()
                    .push((name.to_owned(), args.clone(), ctx.idempotency_key()));
                async move {
                    if name == "hold" && ctx.answer.is_none() {
                        return ToolResult::pending(Request::new("input", "Which seat?"));
                    }
                    ToolResult::ok(format!("{name} {args}"))
                }
            },
        )
    }

    fn attempts(&self) -> Vec<Attempt> {
        self.0.lock().unwrap().clone()
    }

    /// How many attempts each effect (a tool with its arguments) had.
    fn attempts_of(&self) -> HashMap<String, usize> {
        let mut counts = HashMap::new();
        for (name, args, _) in self.attempts() {
            *counts.entry(format!("{name} {args}")).or_default() += 1;
        }
        counts
    }

    /// Each effect with the idempotency keys its attempts carried.
    fn keys_of(&self) -> HashMap<String, HashSet<Option<String>>> {
        let mut keys: HashMap<String, HashSet<Option<String>>> = HashMap::new();
        for (name, args, key) in self.attempts() {
            keys.entry(format!("{name} {args}"))
                .or_default()
                .insert(key);
        }
        keys
    }
}

/// `book` and `hold` free, `charge` behind an approval.
fn toolkit(effects: &Effects) -> Toolkit {
    Toolkit::builder()
        .tool(effects.tool("book"))
        .tool(effects.tool("charge"))
        .tool(effects.tool("hold"))
        .approval(Approval::tools(["charge"]))
        .build()
        .unwrap()
}

/// The first turn: two bookings and a charge, which halts on its gate.
fn first_turn() -> Reply {
    Reply::tool_calls([
        ("c1", "book", json!({"what": "a"})),
        ("c2", "book", json!({"what": "b"})),
        ("g1", "charge", json!({"amount": 5})),
    ])
    .with_usage(11, 3)
}

/// What the model says once the charge is approved: two more bookings, then the end.
fn after_approval() -> Vec<Reply> {
    vec![
        Reply::tool_calls([
            ("c3", "book", json!({"what": "c"})),
            ("c4", "book", json!({"what": "d"})),
        ])
        .with_usage(20, 4),
        Reply::text("all booked and charged").with_usage(30, 5),
    ]
}

/// The halted run every case resumes, made once, with the approval of its charge.
async fn halted(style: Style) -> (Vec<Message>, Request, Effects) {
    let effects = Effects::default();
    let mock = MockLlm::start([first_turn()]).await.unwrap();
    let client = on(&mock, style).build().unwrap();
    let run = client
        .run("book and charge", &toolkit(&effects))
        .await
        .unwrap();
    assert_eq!(run.status, RunStatus::Pending);
    let request = run.pending.clone().unwrap();
    (run.messages, request, effects)
}

/// How a journal stands in for a crash at one of its records.
#[derive(Clone, Copy, Debug)]
enum Crash {
    /// The record fails; `kept`: whether the step was kept before it failed.
    Fails { kept: bool },
    /// The record never returns and the run is dropped; `kept` as above.
    Hangs { kept: bool },
}

/// A journal over `inner` whose `at`-th record (counting from 1) crashes as `crash` says;
/// every later record crashes too, keeping nothing (the process is gone).
struct Crashing {
    inner: InMemoryJournal,
    at: usize,
    crash: Crash,
    records: AtomicUsize,
    reached: Arc<Notify>,
}

impl Journal for Crashing {
    fn step<'a>(&'a self, key: &'a StepKey) -> BoxFuture<'a, Result<Option<Step>, JournalError>> {
        self.inner.step(key)
    }

    fn record<'a>(
        &'a self,
        key: &'a StepKey,
        step: &'a Step,
    ) -> BoxFuture<'a, Result<(), JournalError>> {
        Box::pin(async move {
            let n = self.records.fetch_add(1, Ordering::SeqCst) + 1;
            if n < self.at {
                return self.inner.record(key, step).await;
            }
            let (Crash::Fails { kept } | Crash::Hangs { kept }) = self.crash;
            if n == self.at && kept {
                self.inner.record(key, step).await?;
            }
            match self.crash {
                Crash::Fails { .. } => Err(format!("the disk is gone at record {n}").into()),
                Crash::Hangs { .. } => {
                    self.reached.notify_one();
                    futures::future::pending().await
                }
            }
        })
    }
}

/// The steps of the resumed run: the charge, the second reply, its two bookings, the last
/// reply.
const STEPS: usize = 5;

#[tokio::test]
async fn a_resume_interrupted_at_any_step_ends_as_an_uninterrupted_one_with_every_effect_once() {
    let style = Style::OpenAi;
    let (parked, request, first) = halted(style).await;
    let approve = || Answer::ok(&request.id);

    // The run as it goes when nothing crashes.
    let effects = Effects::default();
    let mock = MockLlm::start(after_approval()).await.unwrap();
    let client = on(&mock, style).build().unwrap();
    let journal = InMemoryJournal::new();
    let expected = client
        .run_with_answer(parked.clone(), &request, approve(), &toolkit(&effects))
        .journal(&journal)
        .await
        .unwrap();
    assert_eq!(expected.status, RunStatus::Done);
    assert_eq!(journal.len(), STEPS, "each step is recorded once");
    let unjournaled = {
        let mock = MockLlm::start(after_approval()).await.unwrap();
        let client = on(&mock, style).build().unwrap();
        let tk = toolkit(&Effects::default());
        client
            .run_with_answer(parked.clone(), &request, approve(), &tk)
            .await
            .unwrap()
    };
    assert_eq!(expected, unjournaled, "a journal changes nothing of a run");
    let once = effects.attempts_of();
    assert_eq!(once.len(), 3);
    assert!(once.values().all(|n| *n == 1));
    assert_eq!(
        first.attempts_of().len(),
        2,
        "the first turn booked a and b"
    );

    let crashes = [
        Crash::Fails { kept: false },
        Crash::Fails { kept: true },
        Crash::Hangs { kept: false },
        Crash::Hangs { kept: true },
    ];
    for crash in crashes {
        for at in 1..=STEPS {
            let case = format!("{crash:?} at record {at}");
            let effects = Effects::default();
            let crashing = Crashing {
                inner: InMemoryJournal::new(),
                at,
                crash,
                records: AtomicUsize::new(0),
                reached: Arc::new(Notify::new()),
            };
            let mock = MockLlm::start(after_approval()).await.unwrap();
            let client = on(&mock, style).build().unwrap();
            let tk = toolkit(&effects);
            let run = client
                .run_with_answer(parked.clone(), &request, approve(), &tk)
                .journal(&crashing);
            match crash {
                Crash::Fails { .. } => {
                    let err = soon(&case, run).await.unwrap_err();
                    assert!(matches!(&err, ClientError::Journal(_)), "{case}: {err:?}");
                    assert!(
                        err.to_string()
                            .contains("the run's journal failed: the disk is gone"),
                        "{case}: {err}"
                    );
                }
                Crash::Hangs { .. } => {
                    let reached = crashing.reached.clone();
                    tokio::select! {
                        ended = run => panic!("{case}: the run ended: {ended:?}"),
                        () = soon(&case, reached.notified()) => {}
                    }
                }
            }
            let asked_first = mock.calls();
            drop(client);

            // What the crashed process kept, read back by another one.
            let kept = serde_json::to_string(&crashing.inner.steps()).unwrap();
            let steps: Vec<(StepKey, Step)> = serde_json::from_str(&kept).unwrap();
            let replies_kept = steps
                .iter()
                .filter(|(_, s)| matches!(s, Step::Reply(_)))
                .count();
            let calls_kept: Vec<String> =
                steps.iter().filter_map(|(k, _)| k.call.clone()).collect();
            let journal = InMemoryJournal::from_steps(steps);
            // The crashed process asked for no reply past the step it crashed at.
            assert!(asked_first <= replies_kept + 1, "{case}");

            let script = after_approval().split_off(replies_kept);
            let mock = MockLlm::start(script).await.unwrap();
            let client = on(&mock, style).build().unwrap();
            let resumed = soon(
                &case,
                client
                    .run_with_answer(parked.clone(), &request, approve(), &tk)
                    .journal(&journal),
            )
            .await
            .unwrap_or_else(|e| panic!("{case}: {e}"));

            assert_eq!(
                resumed, expected,
                "{case}: the run ends as an uninterrupted one"
            );
            assert_eq!(
                mock.calls(),
                2 - replies_kept,
                "{case}: a recorded reply is not requested again"
            );
            assert_eq!(journal.len(), STEPS, "{case}: every step is recorded");
            // Every effect happened: once, or again under the key of its first attempt.
            let keys = effects.keys_of();
            assert_eq!(keys.len(), 3, "{case}: {:?}", effects.attempts());
            for (effect, keys) in &keys {
                assert_eq!(keys.len(), 1, "{case}: {effect} ran under several keys");
                assert!(
                    keys.iter().all(Option::is_some),
                    "{case}: {effect} had no key"
                );
            }
            // A call whose result was kept never ran again.
            let attempts = effects.attempts_of();
            for call in &calls_kept {
                let effect = match call.as_str() {
                    "g1" => "charge {\"amount\":5}",
                    "c3" => "book {\"what\":\"c\"}",
                    "c4" => "book {\"what\":\"d\"}",
                    other => panic!("{case}: a step for call {other}"),
                };
                assert_eq!(attempts[effect], 1, "{case}: {effect} ran again");
            }
        }
    }
}

#[tokio::test]
async fn a_recorded_suspension_is_replayed_as_the_same_suspension() {
    let style = Style::Anthropic;
    let (parked, request, _) = halted(style).await;
    let effects = Effects::default();
    let tk = toolkit(&effects);
    let mock = MockLlm::start([
        Reply::tool_call("h1", "hold", json!({"for": "me"})),
        Reply::text("unused"),
    ])
    .await
    .unwrap();
    let client = on(&mock, style).build().unwrap();
    let journal = InMemoryJournal::new();
    let first = client
        .run_with_answer(parked.clone(), &request, Answer::ok(&request.id), &tk)
        .journal(&journal)
        .await
        .unwrap();
    assert_eq!(first.status, RunStatus::Pending);
    let waits_on = first.pending.clone().unwrap();
    assert_eq!(waits_on.prompt, "Which seat?");

    // Another process takes the same resume up: the model is not asked, `hold` does not
    // run, and the run halts on the very request (its generated id included).
    let mock = MockLlm::start([]).await.unwrap();
    let client = on(&mock, style).build().unwrap();
    let again = client
        .run_with_answer(parked, &request, Answer::ok(&request.id), &tk)
        .journal(&journal)
        .await
        .unwrap();
    assert_eq!(again, first);
    assert_eq!(mock.calls(), 0);
    assert_eq!(effects.attempts_of()["hold {\"for\":\"me\"}"], 1);
    assert_eq!(effects.attempts_of()["charge {\"amount\":5}"], 1);
}

#[tokio::test]
async fn another_runs_journal_replays_nothing() {
    let style = Style::OpenAi;
    let journal = InMemoryJournal::new();
    let mut results: Vec<RunResult> = Vec::new();
    let effects = Effects::default();
    for _ in 0..2 {
        // The same script and toolkit, but another run (another run id).
        let (parked, request, _) = halted(style).await;
        let mock = MockLlm::start(after_approval()).await.unwrap();
        let client = on(&mock, style).build().unwrap();
        let run = client
            .run_with_answer(
                parked,
                &request,
                Answer::ok(&request.id),
                &toolkit(&effects),
            )
            .journal(&journal)
            .await
            .unwrap();
        assert_eq!(mock.calls(), 2, "each run asks the model itself");
        results.push(run);
    }
    assert_eq!(journal.len(), 2 * STEPS, "each run keeps its own steps");
    assert!(effects.attempts_of().values().all(|n| *n == 2));
    assert_ne!(results[0].messages, results[1].messages);
    assert_eq!(results[0].text, results[1].text);
}

#[tokio::test]
async fn steps_go_through_json_with_stable_keys() {
    let style = Style::OpenAi;
    let (parked, request, _) = halted(style).await;
    let mock = MockLlm::start(after_approval()).await.unwrap();
    let client = on(&mock, style).build().unwrap();
    let journal = InMemoryJournal::new();
    client
        .run_with_answer(
            parked,
            &request,
            Answer::ok(&request.id),
            &toolkit(&Effects::default()),
        )
        .journal(&journal)
        .await
        .unwrap();
    let steps = journal.steps();
    let wire = serde_json::to_value(&steps).unwrap();
    for ((key, step), pair) in steps.iter().zip(wire.as_array().unwrap()) {
        let [k, s] = pair.as_array().unwrap().as_slice() else {
            panic!("a step is a [key, step] pair: {pair}");
        };
        assert_eq!(k["turn"], key.turn.as_str());
        assert_eq!(k.get("call").and_then(Value::as_str), key.call.as_deref());
        assert_eq!(
            k.get("answered").and_then(Value::as_str),
            key.answered.as_deref()
        );
        match step {
            Step::Reply(reply) => {
                assert_eq!(s["step"], "reply");
                assert_eq!(s["text"], reply.text.as_str());
                assert_eq!(s["usage"]["prompt_tokens"], reply.usage.prompt_tokens);
            }
            Step::Call(call) => {
                assert_eq!(s["step"], "call");
                assert_eq!(s["result"]["output"], call.result.output.as_str());
            }
        }
        let back: Step = serde_json::from_value(s.clone()).unwrap();
        assert_eq!(&back, step);
    }
    // The approved charge ran on its answer: its key names the request.
    let charge = steps
        .iter()
        .find(|(k, _)| k.call.as_deref() == Some("g1"))
        .unwrap();
    assert_eq!(charge.0.answered.as_deref(), Some(request.id.as_str()));
    let Step::Call(call) = &charge.1 else {
        panic!("{charge:?}")
    };
    assert_eq!(call.approval.as_ref().map(|a| a.ok), Some(true));

    // A step of a kind the loop does not know is refused, not guessed at.
    let unreadable = serde_json::from_value::<Step>(json!({"step": "nap"}));
    assert!(unreadable.is_err());
}
