//! The parent side: lanes of runs, each lane a task queue of its own served by one worker
//! process at a time, so the harness always knows which process holds a run's step. Each
//! run buys one or two items; the harness approves or declines each and kills the lane's
//! worker at the points the run's plan names, starting another in its place, until a
//! worker finishes the run. Then it counts the run's orders and reads its result.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use temporalio_client::tonic;
use temporalio_common::protos::temporal::api::common::v1::WorkflowExecution;
use temporalio_common::protos::temporal::api::workflowservice::v1::ResetStickyTaskQueueRequest;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};
use toolnexus::testing::{MockLlm, RecordedRequest, Reply};
use toolnexus::{Answer, Request, RunResult, RunStatus};
use toolnexus_temporal::{AnswerRefusal, Connection, Runs, TemporalError};

use crate::shop::{self, Book};
use crate::worker::{self, ARM, ARMED, DISARMED, PAUSED_AT};

mod lanes;
mod plan;
mod recovery;

use plan::{Draws, Plan, Point};
pub use recovery::WITHIN;

/// The items a run may buy.
const NAMES: [&str; 4] = ["gpu", "tpu", "desk", "cable"];

/// How long the model holds a reply whose call the harness kills: far longer than the
/// kill takes, so the worker dies with the call in flight.
const HELD: Duration = Duration::from_secs(30);

/// Patience for a slow machine: how long a run may take to reach its wait, an answer to be
/// taken, a run to end once answered, and a worker to stop or to arm once told to.
const TO_WAIT: Duration = Duration::from_secs(120);
const TO_ANSWER: Duration = Duration::from_secs(120);
const TO_END: Duration = Duration::from_secs(240);
const TO_STOP: Duration = Duration::from_secs(20);
const TO_ARM: Duration = Duration::from_secs(20);
/// How long one look at what a run waits on may take, and the pause between looks: a look
/// is a query the worker answers, so the lanes' looks are kept few.
const LOOK: Duration = Duration::from_secs(10);
const BETWEEN_LOOKS: Duration = Duration::from_millis(250);

/// What a session found.
#[derive(Default, Debug)]
pub struct Report {
    pub runs: usize,
    pub kills: usize,
    /// Kills after which the run waited out its dead worker's sticky queue.
    pub sticky: usize,
    pub approved: usize,
    pub declined: usize,
    /// Where the kills fell, and how often.
    pub points: BTreeMap<&'static str, usize>,
    /// Approved purchases that placed more than one order.
    pub doubled: Vec<String>,
    /// Approved purchases that placed none, and runs that did not end as they should.
    pub lost: Vec<String>,
    /// Declined purchases that ran.
    pub unapproved: Vec<String>,
    /// Purchases run again under their key (the kill fell inside the step): one order
    /// each, as the book counts them.
    pub rerun_under_key: usize,
    /// Model calls made again (the kill fell while the step was in flight).
    pub asked_again: usize,
    pub elapsed: Duration,
}

impl Report {
    pub fn failures(&self) -> usize {
        self.doubled.len() + self.lost.len() + self.unapproved.len()
    }

    fn absorb(&mut self, other: Report) {
        self.runs += other.runs;
        self.kills += other.kills;
        self.sticky += other.sticky;
        self.approved += other.approved;
        self.declined += other.declined;
        for (point, n) in other.points {
            *self.points.entry(point).or_default() += n;
        }
        self.doubled.extend(other.doubled);
        self.lost.extend(other.lost);
        self.unapproved.extend(other.unapproved);
        self.rerun_under_key += other.rerun_under_key;
        self.asked_again += other.asked_again;
    }
}

/// What reaches a lane from its workers and from the scripted model.
enum Event {
    /// A worker of the given generation stopped at a point inside a tool.
    Paused { generation: u64, point: String },
    /// A worker of the given generation will stop at a point inside a tool.
    Armed { generation: u64, point: String },
    /// A worker of the given generation no longer stops at a point inside a tool.
    Disarmed { generation: u64, point: String },
    /// The model holds the reply to the run's call of this turn, made by the worker of
    /// process `worker`.
    Model {
        workflow: String,
        turn: usize,
        worker: Option<u32>,
    },
}

/// The model calls the harness kills, and where each run's events go: the scripted model
/// reads and counts them as requests arrive.
#[derive(Default)]
struct Calls {
    /// `(workflow, turn)` calls whose worker is killed as they arrive.
    armed: BTreeSet<(String, usize)>,
    routes: HashMap<String, UnboundedSender<Event>>,
    /// Requests per `(workflow, turn)`.
    made: BTreeMap<(String, usize), usize>,
}

type SharedCalls = Arc<Mutex<Calls>>;

fn lock(calls: &SharedCalls) -> std::sync::MutexGuard<'_, Calls> {
    calls.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The scripted model's reply to `req`, held when the harness kills the call.
fn answer_model(calls: &SharedCalls, req: &RecordedRequest) -> Reply {
    let reply = shop::script(req);
    let Some(workflow) = shop::run_of(req) else {
        return reply;
    };
    let turn = shop::turn_of(req);
    let mut calls = lock(calls);
    *calls.made.entry((workflow.clone(), turn)).or_default() += 1;
    if !calls.armed.remove(&(workflow.clone(), turn)) {
        return reply;
    }
    if let Some(route) = calls.routes.get(&workflow) {
        let worker = req
            .header("authorization")
            .and_then(|auth| auth.strip_prefix("Bearer "))
            .and_then(|key| key.strip_prefix(worker::KEY_OF))
            .and_then(|pid| pid.parse().ok());
        let _ = route.send(Event::Model {
            workflow,
            turn,
            worker,
        });
    }
    reply.delayed(HELD)
}

/// A session: the Temporal server, the scripted model, the order book, and the kills so
/// far over every lane.
pub struct Harness {
    address: String,
    runs: Runs,
    /// Temporal's own API, for what `Runs` leaves out: clearing a run's stickiness.
    service: temporalio_client::Connection,
    model: MockLlm,
    calls: SharedCalls,
    book: Book,
    tag: String,
    kills: AtomicUsize,
}

/// A lane: its task queue, the worker serving it now, the tool points that worker stops at,
/// and the kills of the lane's current run. The worker serves run after run until one of
/// them kills it.
struct Lane {
    queue: String,
    worker: Child,
    /// The worker's standard input: each line arms a point; closing it stops the worker.
    input: ChildStdin,
    generation: u64,
    armed: BTreeSet<String>,
    kills: Vec<&'static str>,
    /// Where its workers' announcements go.
    events: UnboundedSender<Event>,
}

type SharedLane = tokio::sync::Mutex<Lane>;

impl Harness {
    pub async fn new(address: String) -> Harness {
        let tag = format!(
            "kills-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() % 1_000_000_000)
        );
        let book = Book::new(std::env::temp_dir().join(format!("toolnexus_temporal_{tag}")));
        book.create().expect("the order book's directory");
        let calls = SharedCalls::default();
        let answering = calls.clone();
        let model = MockLlm::with_fn(move |req| answer_model(&answering, req))
            .await
            .expect("the scripted model starts");
        let runs = Runs::connect(&Connection::new(address.clone()))
            .await
            .unwrap_or_else(|e| panic!("the harness reaches Temporal at {address}: {e}"));
        let url = url::Url::parse(&format!("http://{address}")).expect("a server's URL");
        let service = temporalio_client::ConnectionOptions::new(url)
            .identity("toolnexus kills harness".to_owned())
            .build();
        let service = temporalio_client::Connection::connect(service)
            .await
            .unwrap_or_else(|e| panic!("the harness reaches Temporal at {address}: {e}"));
        Harness {
            address,
            runs,
            service,
            model,
            calls,
            book,
            tag,
            kills: AtomicUsize::new(0),
        }
    }

    /// At least `kills` kills over `lanes` lanes running at once, each lane's plans drawn
    /// from `seed`; the session's files are removed after.
    pub async fn run(self, kills: usize, lanes: usize, seed: u64) -> Report {
        let started = Instant::now();
        let this = &self;
        let sessions = (0..lanes).map(|index| async move {
            let mut rng = Draws::new(seed, index);
            let queue = format!("{}-{index}", this.tag);
            let runs = this.runs.clone().task_queue(queue.clone());
            let (events, mut received) = unbounded_channel();
            let (worker, input) = this.worker(&queue, 1, &BTreeSet::new(), &events);
            let lane = SharedLane::new(Lane {
                queue: queue.clone(),
                worker,
                input,
                generation: 1,
                armed: BTreeSet::new(),
                kills: Vec::new(),
                events,
            });
            let mut report = Report::default();
            let mut n = 0;
            while this.kills.load(Ordering::SeqCst) < kills {
                let workflow = format!("{queue}-{n}");
                let plan = Plan::draw(workflow, n + index, &mut rng);
                report.absorb(this.scenario(&runs, &lane, &mut received, &plan).await);
                n += 1;
            }
            let mut lane = lane.into_inner();
            stop(&mut lane.worker, lane.input).await;
            report
        });
        let mut report = Report::default();
        for lane in futures::future::join_all(sessions).await {
            report.absorb(lane);
        }
        report.elapsed = started.elapsed();
        let _ = std::fs::remove_dir_all(self.book.dir());
        drop(self.model);
        report
    }

    /// One run through its plan; what it found.
    async fn scenario(
        &self,
        runs: &Runs,
        lane: &SharedLane,
        received: &mut UnboundedReceiver<Event>,
        plan: &Plan,
    ) -> Report {
        {
            let events = lane.lock().await.events.clone();
            let mut calls = lock(&self.calls);
            calls.routes.insert(plan.workflow.clone(), events);
            for point in &plan.kills {
                if let Point::Model(turn) = point {
                    calls.armed.insert((plan.workflow.clone(), *turn));
                }
            }
        }
        let points = plan.kills.iter().filter_map(Point::in_worker).collect();
        self.arm(lane, received, points).await;
        let ended = tokio::select! {
            ended = self.drive(runs, plan, lane) => ended,
            () = self.on_events(lane, plan, received) => {
                Err("the run's events stopped".to_owned())
            }
        };
        {
            let mut calls = lock(&self.calls);
            calls.routes.remove(&plan.workflow);
            calls
                .armed
                .retain(|(workflow, _)| *workflow != plan.workflow);
        }
        let kills = {
            let mut lane = lane.lock().await;
            std::mem::take(&mut lane.kills)
        };
        let report = self.count(plan, ended, kills);
        self.disarm(lane).await;
        report
    }

    /// Drives the run as a person would: starts it, waits for its requests, answers each,
    /// and awaits its end; kills the worker at the harness's own points.
    async fn drive(
        &self,
        runs: &Runs,
        plan: &Plan,
        lane: &SharedLane,
    ) -> Result<RunResult, String> {
        let id = &plan.workflow;
        runs.start(id, &plan.prompt())
            .await
            .map_err(|e| format!("did not start: {e}"))?;
        let waiting = waiting(runs, id).await?;
        if plan.kills_at(&Point::Waiting) {
            self.kill(lane, plan, &Point::Waiting).await;
        }
        for (k, request) in waiting.iter().enumerate() {
            let item = request
                .data
                .as_ref()
                .and_then(|d| d["args"]["item"].as_str())
                .ok_or_else(|| format!("request `{}` names no item: {request:?}", request.id))?;
            let ok = plan
                .items
                .iter()
                .position(|i| i == item)
                .map(|i| plan.approved[i])
                .ok_or_else(|| format!("request `{}` buys `{item}`, never asked", request.id))?;
            let answer = match ok {
                true => Answer::ok(&request.id),
                false => Answer::decline(&request.id, "not this time"),
            };
            give(runs, id, &answer).await?;
            if plan.kills_at(&Point::Answered(k)) {
                self.kill(lane, plan, &Point::Answered(k)).await;
            }
        }
        match tokio::time::timeout(TO_END, runs.result(id)).await {
            Ok(ended) => ended.map_err(|e| e.to_string()),
            Err(_) => Err(format!("not ended after {TO_END:?}")),
        }
    }

    /// Counts one run's orders and reads its result.
    fn count(
        &self,
        plan: &Plan,
        ended: Result<RunResult, String>,
        kills: Vec<&'static str>,
    ) -> Report {
        let name = &plan.workflow;
        let mut report = Report {
            runs: 1,
            kills: kills.len(),
            sticky: if plan.sticky { kills.len() } else { 0 },
            ..Report::default()
        };
        for kind in kills {
            *report.points.entry(kind).or_default() += 1;
        }
        let placed = self.book.placed();
        let ran = self.book.ran();
        let mut said = Vec::new();
        for (item, ok) in plan.items.iter().zip(&plan.approved) {
            let orders = placed.get(item).map_or(&[][..], Vec::as_slice);
            let times = ran.get(item).copied().unwrap_or(0);
            let call = shop::call_of(item);
            if *ok {
                report.approved += 1;
                match orders {
                    [] => report
                        .lost
                        .push(format!("{name}: {item} was approved, never bought")),
                    [order] => said.push(shop::said_of(&call, &format!("ordered {order}"))),
                    more => report.doubled.push(format!(
                        "{name}: {item} placed {} orders: {more:?}",
                        more.len()
                    )),
                }
                report.rerun_under_key += times.saturating_sub(1);
            } else {
                report.declined += 1;
                if times > 0 || !orders.is_empty() {
                    report.unapproved.push(format!(
                        "{name}: {item} was declined, yet its purchase ran {times} times \
                         ({} orders)",
                        orders.len()
                    ));
                }
                said.push(shop::said_of(&call, "declined"));
            }
        }
        report.asked_again = lock(&self.calls)
            .made
            .iter()
            .filter(|((workflow, _), _)| workflow == name)
            .map(|(_, n)| n.saturating_sub(1))
            .sum();
        match ended {
            Ok(result) => {
                let expected = said.join("; ");
                if result.status != RunStatus::Done || result.text != expected {
                    report.lost.push(format!(
                        "{name}: ended {:?} saying {:?} where {expected:?}",
                        result.status, result.text
                    ));
                }
            }
            Err(why) => report.lost.push(format!("{name}: {why}")),
        }
        report
    }
}

/// The requests the run waits on, once it waits.
async fn waiting(runs: &Runs, id: &str) -> Result<Vec<Request>, String> {
    let deadline = Instant::now() + TO_WAIT;
    let mut last = String::from("nothing yet");
    while Instant::now() < deadline {
        match tokio::time::timeout(LOOK, runs.pending(id)).await {
            Ok(Ok(waiting)) if !waiting.is_empty() => return Ok(waiting),
            Ok(Ok(_)) => last = "nothing waits".to_owned(),
            Ok(Err(e)) => last = e.to_string(),
            Err(_) => last = format!("no reply to a query in {LOOK:?}"),
        }
        tokio::time::sleep(BETWEEN_LOOKS).await;
    }
    Err(format!("never waited within {TO_WAIT:?} ({last})"))
}

/// Gives `answer`; a retry after an attempt whose reply was lost finds it taken.
async fn give(runs: &Runs, id: &str, answer: &Answer) -> Result<(), String> {
    let deadline = Instant::now() + TO_ANSWER;
    let mut tried = false;
    loop {
        let why = match tokio::time::timeout(TO_ANSWER, runs.answer(id, answer)).await {
            Ok(Ok(_)) => return Ok(()),
            Ok(Err(TemporalError::Refused {
                refusal: AnswerRefusal::AlreadyAnswered,
                ..
            })) if tried => return Ok(()),
            Ok(Err(e)) => e.to_string(),
            Err(_) => format!("no reply in {TO_ANSWER:?}"),
        };
        if Instant::now() >= deadline {
            return Err(format!("answer to `{}` not taken: {why}", answer.id));
        }
        tried = true;
        tokio::time::sleep(BETWEEN_LOOKS).await;
    }
}

/// Stops a worker as a deployment does (its input closes), or kills it when it lingers.
async fn stop(worker: &mut Child, input: ChildStdin) {
    drop(input);
    if tokio::time::timeout(TO_STOP, worker.wait()).await.is_err() {
        let _ = worker.kill().await;
    }
}
