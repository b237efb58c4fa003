//! The parent side: parks runs of a kind (halted on three purchases, or on two refunds
//! asked two agents down), approves some and declines the others, then has worker
//! processes resume each run, killing them at chosen points, until one
//! finishes it. After every kill it notes what the dead worker left committed (the
//! journal's steps, the ledger's effects, the model's requests); once the run is finished
//! it counts what went wrong.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use sqlx::Row;
use tokio::io::{AsyncBufReadExt, BufReader};
use toolnexus::testing::MockLlm;
use toolnexus::{Answer, LlmClient, RunResult, StepKey};
use toolnexus_inbox::{Inbox, ParkedState, Person};

use crate::kind::Kind;
use crate::shop::{Effects, Ledger};
use crate::worker::{self, FINISHED, KILLED_AT, LEASE};
use toolnexus_test_support::names::unique;

/// The engines the harness runs on.
#[derive(Clone, Copy, Debug)]
pub enum Engine {
    Sqlite,
    Postgres,
}

impl Engine {
    pub fn name(self) -> &'static str {
        match self {
            Engine::Sqlite => "sqlite",
            Engine::Postgres => "postgres",
        }
    }
}

/// A small deterministic generator, so a seed replays a whole session of kills.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    /// A number in `1..=n`.
    fn upto(&mut self, n: usize) -> usize {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_f491_4f6c_dd1d);
        (x % n.max(1) as u64) as usize + 1
    }
}

/// What a harness session found.
#[derive(Default, Debug)]
pub struct Report {
    pub runs: usize,
    pub kills: usize,
    /// Where the kills fell, and how often.
    pub points: BTreeMap<String, usize>,
    /// Approved effects that happened twice (two orders, or run again after the journal
    /// held their result).
    pub doubled: Vec<String>,
    /// Approved effects that never happened, and runs never finished.
    pub lost: Vec<String>,
    /// Declined effects that happened.
    pub unapproved: Vec<String>,
    /// Model replies requested again after the journal held them.
    pub asked_again: Vec<String>,
    /// Finished transcripts unlike the uninterrupted run's.
    pub transcripts: Vec<String>,
    /// Effects run again under the same idempotency key (the kill fell between the effect
    /// and its record): one order each, as the shop counts them.
    pub rerun_under_key: usize,
    /// Model requests made again because the kill came before their reply was recorded.
    pub requested_again: usize,
    pub elapsed: Duration,
}

impl Report {
    pub fn failures(&self) -> usize {
        self.doubled.len()
            + self.lost.len()
            + self.unapproved.len()
            + self.asked_again.len()
            + self.transcripts.len()
    }
}

/// What a finished run said and did, as JSON, with what differs between runs of the same
/// prompt (its requests' ids, the loop's run id) put as placeholders. The usage and turn
/// count are left out: a replayed reply costs nothing.
fn transcript(result: &RunResult, ids: &[&str]) -> String {
    let said = (
        &result.status,
        &result.text,
        &result.tool_calls,
        &result.messages,
    );
    let mut text = serde_json::to_string(&said).expect("a result serializes");
    for (i, id) in ids.iter().enumerate() {
        text = text.replace(id, &format!("<id {i}>"));
    }
    text
}

/// How a worker ended.
enum End {
    Killed(String),
    Finished(usize),
}

/// What a killed worker left committed.
struct Left {
    /// Calls whose result the journal holds.
    recorded: BTreeSet<String>,
    /// Model replies the journal holds (a resumed run's turns go in order, so these are
    /// its first ones).
    replies: usize,
    effects: Effects,
    requests: Vec<usize>,
}

/// One engine's session of one kind of run: its database, the parent's inbox and the
/// scripted model.
pub struct Harness {
    engine: Engine,
    kind: Kind,
    url: String,
    dir: PathBuf,
    inbox: Inbox,
    pool: sqlx::AnyPool,
    llm: MockLlm,
    client: LlmClient,
    seq: usize,
}

impl Harness {
    pub async fn new(engine: Engine, kind: Kind) -> Harness {
        let dir = std::env::temp_dir().join(unique(&format!(
            "toolnexus_kills_{}_{}",
            engine.name(),
            kind.name()
        )));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        let url = match engine {
            Engine::Sqlite => format!("sqlite://{}", dir.join("inbox.db").display()),
            Engine::Postgres => {
                crate::common::pg::create_database(&unique("toolnexus_kills")).await
            }
        };
        let inbox = worker::inbox_builder(&url, Duration::ZERO)
            .open()
            .await
            .expect("the inbox opens");
        sqlx::any::install_default_drivers();
        let pool = sqlx::AnyPool::connect(&url)
            .await
            .expect("the database opens");
        let llm = MockLlm::with_fn(kind.script())
            .await
            .expect("the scripted model");
        let client = worker::client(&llm.base_url());
        Harness {
            engine,
            kind,
            url,
            dir,
            inbox,
            pool,
            llm,
            client,
            seq: 0,
        }
    }

    /// At least `kills` kills, at points drawn from `rng`, over as many runs as it takes;
    /// the session's files are removed after (its PostgreSQL database goes with the test
    /// cluster).
    pub async fn run(mut self, kills: usize, rng: &mut Rng) -> Report {
        let started = Instant::now();
        let mut report = Report::default();
        // The uninterrupted run: the transcript every other must end with, and how many
        // kill points a whole resume passes.
        let (reference, points) = self.scenario(&[], &mut report, None).await;
        let reference = reference.expect("the uninterrupted run finishes");
        while report.kills < kills {
            let plan: Vec<usize> = (0..rng.upto(3)).map(|_| rng.upto(points)).collect();
            self.scenario(&plan, &mut report, Some(reference.as_str()))
                .await;
        }
        report.elapsed = started.elapsed();
        let _ = std::fs::remove_dir_all(&self.dir);
        report
    }

    /// Parks a run, answers it, and has workers resume it, the first ones killed at the
    /// points `plan` numbers, the next one left to finish. Checks the finished run against
    /// `reference` when given. The finished run's result, and the kill points the last
    /// worker passed.
    async fn scenario(
        &mut self,
        plan: &[usize],
        report: &mut Report,
        reference: Option<&str>,
    ) -> (Option<String>, usize) {
        self.seq += 1;
        let name = format!("run {}", self.seq);
        let ledger = Ledger::new(self.dir.join(format!("ledger-{}", self.seq)));
        let tk = self.kind.toolkit(&ledger, &self.client);
        self.llm.take_requests();
        let prompt = self.kind.prompt();
        let halted = self.client.run(prompt, &tk).await.expect("the run halts");
        assert_eq!(halted.waiting.len(), self.kind.requests(), "{halted:?}");
        let id = self.inbox.park(&halted).await.expect("the run parks");
        for (n, request) in halted.waiting.iter().enumerate() {
            let answer = match self.kind.approves(n, request) {
                true => Answer::ok(&request.id),
                false => Answer::decline(&request.id, "declined"),
            };
            // Finance's person: the refunds are theirs to answer, the purchases anyone's.
            let finance = Person::new("ada@example.com").groups(["finance"]);
            self.inbox
                .answer_as(answer, finance)
                .await
                .expect("the answer is taken");
        }
        let run = self.inbox.get(&id).await.expect("the row reads");
        let run = run.expect("the parked run").run;

        report.runs += 1;
        let mut left = Vec::new();
        let mut last = 0;
        // Each worker's clock runs a lease ahead of the one before, so it takes over at
        // once from the dead one whose claim never lapses by the system's clock.
        let workers = plan.iter().map(Some).chain([None]);
        for (generation, kill_at) in (1u32..).zip(workers) {
            let ahead = (LEASE + Duration::from_secs(1)) * generation;
            match self.worker(&ledger, kill_at.copied(), ahead).await {
                End::Killed(point) => {
                    report.kills += 1;
                    *report.points.entry(point).or_default() += 1;
                    left.push(self.left(&run, &ledger).await);
                    let row = self.inbox.get(&id).await.expect("the row reads");
                    if row.is_some_and(|r| r.run_state == ParkedState::Done) {
                        break;
                    }
                }
                End::Finished(points) => {
                    last = points;
                    break;
                }
            }
        }

        let row = self.inbox.get(&id).await.expect("the row reads");
        let result = match row {
            Some(row) if row.run_state == ParkedState::Done => row.result,
            other => {
                let state = other.map(|r| r.run_state);
                report
                    .lost
                    .push(format!("{name}: not finished ({state:?})"));
                None
            }
        };
        self.count(&name, &ledger.read(), &left, report);
        let mut ids: Vec<&str> = halted.waiting.iter().map(|r| r.id.as_str()).collect();
        ids.extend(halted.messages.iter().find_map(|m| m.run_id()));
        let transcript = result.map(|r| transcript(&r, &ids));
        if let (Some(transcript), Some(reference)) = (&transcript, reference)
            && transcript != reference
        {
            report
                .transcripts
                .push(format!("{name}: {transcript} where {reference}"));
        }
        (transcript, last)
    }

    /// Counts the run's effects and model requests against what each killed worker left.
    fn count(&self, name: &str, effects: &Effects, left: &[Left], report: &mut Report) {
        let (approved, declined) = self.kind.effects();
        for call in approved {
            match effects.orders(&call) {
                0 => report
                    .lost
                    .push(format!("{name}: {call} never took effect ({effects:?})")),
                1 => {}
                n => report
                    .doubled
                    .push(format!("{name}: {call} placed {n} orders")),
            }
            report.rerun_under_key += effects.runs(&call).saturating_sub(1);
        }
        for call in declined {
            if effects.runs(&call) > 0 {
                report
                    .unapproved
                    .push(format!("{name}: declined {call} ran"));
            }
        }
        let requests = self.requests();
        // Turn 0 halted before the answers; the resume's turns are the others.
        let resumed = requests.iter().skip(1);
        report.requested_again += resumed.map(|n| n.saturating_sub(1)).sum::<usize>();
        for (k, left) in left.iter().enumerate() {
            for call in &left.recorded {
                if effects.runs(call) != left.effects.runs(call) {
                    report.doubled.push(format!(
                        "{name}: {call} ran again after kill {} recorded its result",
                        k + 1
                    ));
                }
            }
            let recorded = requests.iter().zip(&left.requests).enumerate();
            for (turn, (now, then)) in recorded.skip(1).take(left.replies) {
                if now != then {
                    report.asked_again.push(format!(
                        "{name}: turn {turn} asked again after kill {} recorded its reply",
                        k + 1
                    ));
                }
            }
        }
    }

    /// The model's requests since the run started, by turn.
    fn requests(&self) -> Vec<usize> {
        let mut by_turn = vec![0; self.kind.turns()];
        for req in self.llm.requests() {
            by_turn[self.kind.turn_of(&req)] += 1;
        }
        by_turn
    }

    /// What a killed worker left: the run's journal, the ledger, the model's requests.
    async fn left(&self, run: &str, ledger: &Ledger) -> Left {
        let rows = sqlx::query("SELECT step_key FROM toolnexus_inbox_journal WHERE run_id = $1")
            .bind(run)
            .fetch_all(&self.pool)
            .await
            .expect("the journal reads");
        let mut recorded = BTreeSet::new();
        let mut replies = 0;
        for row in rows {
            let key: String = row.try_get("step_key").expect("a step key");
            let key: StepKey = serde_json::from_str(&key).expect("a step key's JSON");
            match key.call {
                Some(call) => {
                    recorded.insert(call);
                }
                None => replies += 1,
            }
        }
        Left {
            recorded,
            replies,
            effects: ledger.read(),
            requests: self.requests(),
        }
    }

    /// The session's name, as the report gives it.
    fn name(&self) -> String {
        session_name(self.engine, self.kind)
    }

    /// Starts a worker process (this binary) on the inbox, its clock `ahead`, to be killed
    /// at point `kill_at` if it gets that far.
    async fn worker(&self, ledger: &Ledger, kill_at: Option<usize>, ahead: Duration) -> End {
        let exe = std::env::current_exe().expect("the harness has a path");
        let mut cmd = tokio::process::Command::new(exe);
        cmd.env(worker::DB, &self.url)
            .env(worker::LEDGER, ledger.path())
            .env(worker::MODEL, self.llm.base_url())
            .env(worker::AHEAD_MS, ahead.as_millis().to_string())
            .env(worker::KIND, self.kind.name())
            .env_remove(worker::AT)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .kill_on_drop(true);
        if let Some(at) = kill_at {
            cmd.env(worker::AT, at.to_string());
        }
        let mut child = cmd.spawn().expect("the worker starts");
        let out = child.stdout.take().expect("the worker's output");
        let line = tokio::time::timeout(
            Duration::from_secs(60),
            BufReader::new(out).lines().next_line(),
        )
        .await
        .unwrap_or_else(|_| panic!("{}: a worker hung", self.name()))
        .expect("the worker's output reads")
        .unwrap_or_default();
        if let Some(point) = line.strip_prefix(KILLED_AT) {
            // std's and tokio's kill is SIGKILL on Unix.
            child.kill().await.expect("SIGKILL the worker");
            return End::Killed(point.to_owned());
        }
        let status = child.wait().await.expect("the worker exits");
        match line.strip_prefix(FINISHED) {
            Some(points) if status.success() => End::Finished(points.parse().expect("a count")),
            _ => panic!("{}: a worker failed ({status}): {line}", self.name()),
        }
    }
}

/// How a session of `kind` on `engine` is named and filtered: `kills::sqlite` for the
/// shop's runs, `kills::sqlite::nested` for the nested ones.
pub fn session_name(engine: Engine, kind: Kind) -> String {
    match kind {
        Kind::Shop => format!("kills::{}", engine.name()),
        other => format!("kills::{}::{}", engine.name(), other.name()),
    }
}
