//! [`Inbox`]: the handle on one inbox database, how it is opened, and the people's side of
//! it — parking a halted run, listing, answering, expiring.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use sqlx::{Any, AnyPool, Executor};
use tokio::sync::Notify;
use toolnexus::{Answer, Message, Refusal, Request, RunResult, RunStatus, ToolCallRecord};

use crate::clock::{ms, now_ms, parse_rfc3339};
use crate::form::check_answer;
use crate::parked::parked_columns;
use crate::store::{self, Engine, PoolSettings, SqliteSync};
use crate::{InboxError, Parked, ParkedState, WaitingPage};

/// The PostgreSQL channel answers are announced on, so idle workers wake at once (spelled
/// out again in the answer statement, `and_announce!`).
pub(crate) const CHANNEL: &str = "toolnexus_inbox";

/// Parked runs in a database: people answer them, and any worker resumes each exactly once.
///
/// A cheap, cloneable handle on a connection pool (`Send + Sync`). It parks under its
/// agent (default `"default"`) and resumes only that agent's runs; listing and answering
/// cover every agent in the database.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use toolnexus_inbox::Inbox;
///
/// let inbox = Inbox::open("sqlite::memory:").await?;
/// assert!(inbox.waiting().await?.is_empty());
/// # Ok::<(), toolnexus_inbox::InboxError>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct Inbox {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) pool: AnyPool,
    pub(crate) engine: Engine,
    /// Kept for the LISTEN connection; never shown (it may hold a password).
    pub(crate) url: String,
    pub(crate) agent: String,
    pub(crate) lease: Duration,
    pub(crate) max_attempts: u32,
    pub(crate) poll_interval: Duration,
    /// Wakes one idle worker slot per answer (this process's answers, and other processes'
    /// relayed from NOTIFY): one answer is one run to resume, so waking every idle slot
    /// would only send the others to claim nothing. A slot that gets a run goes on claiming
    /// until none is left, so runs answered in a burst are all taken.
    pub(crate) answered: Notify,
}

impl fmt::Debug for Inbox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Inbox")
            .field("engine", &self.inner.engine)
            .field("agent", &self.inner.agent)
            .field("lease", &self.inner.lease)
            .field("max_attempts", &self.inner.max_attempts)
            .finish_non_exhaustive()
    }
}

/// Options for [`Inbox::builder`].
#[derive(Clone)]
pub struct InboxBuilder {
    url: String,
    agent: String,
    lease: Duration,
    max_attempts: u32,
    poll_interval: Duration,
    pool: PoolSettings,
}

impl fmt::Debug for InboxBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InboxBuilder")
            .field("agent", &self.agent)
            .field("lease", &self.lease)
            .field("max_attempts", &self.max_attempts)
            .finish_non_exhaustive()
    }
}

impl InboxBuilder {
    /// The agent this handle parks under and resumes for (default `"default"`): one
    /// database serves several agents, and a worker never resumes another agent's run with
    /// its own toolkit.
    pub fn agent(mut self, agent: impl Into<String>) -> Self {
        self.agent = agent.into();
        self
    }

    /// How long a worker's claim on a run lasts (default 5 minutes). A worker renews it
    /// while the resume runs; when a worker dies, another takes the run over once it lapses.
    /// A failed attempt also waits this long before the run is resumed again.
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease.max(Duration::from_millis(10));
        self
    }

    /// How many claims a run gets before it is `Failed` (default 5).
    pub fn max_attempts(mut self, attempts: u32) -> Self {
        self.max_attempts = attempts.max(1);
        self
    }

    /// The most connections the pool opens (default 4 for SQLite, 10 for PostgreSQL).
    pub fn pool_size(mut self, connections: u32) -> Self {
        self.pool.max_connections = Some(connections.max(1));
        self
    }

    /// How often an idle worker looks for answered runs when nothing wakes it (default
    /// 100 ms on SQLite; on PostgreSQL answers wake workers at once and this is a fallback).
    pub fn poll_interval(mut self, interval: Duration) -> Self {
        self.poll_interval = interval.max(Duration::from_millis(1));
        self
    }

    /// How long to wait for a connection before failing with
    /// [`InboxError::Database`] (default 10 s).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.pool.connect_timeout = timeout;
        self
    }

    /// SQLite's `synchronous` setting (default [`SqliteSync::Normal`]).
    pub fn sqlite_sync(mut self, sync: SqliteSync) -> Self {
        self.pool.sqlite_sync = sync;
        self
    }

    /// Connects, creating the database (SQLite) and its tables when missing.
    pub async fn open(self) -> Result<Inbox, InboxError> {
        let (engine, pool) = store::open(&self.url, &self.pool).await?;
        Ok(Inbox {
            inner: Arc::new(Inner {
                pool,
                engine,
                url: self.url,
                agent: self.agent,
                lease: self.lease,
                max_attempts: self.max_attempts,
                poll_interval: self.poll_interval,
                answered: Notify::new(),
            }),
        })
    }
}

impl Inbox {
    /// Opens the inbox at `url` with the default options: `sqlite://PATH` (created if
    /// missing), `sqlite::memory:`, or `postgres://USER@HOST/DB`.
    pub async fn open(url: &str) -> Result<Inbox, InboxError> {
        Inbox::builder(url).open().await
    }

    /// Options before opening.
    pub fn builder(url: impl Into<String>) -> InboxBuilder {
        InboxBuilder {
            url: url.into(),
            agent: "default".to_owned(),
            lease: Duration::from_secs(300),
            max_attempts: 5,
            poll_interval: Duration::from_millis(100),
            pool: PoolSettings {
                max_connections: None,
                sqlite_sync: SqliteSync::default(),
                connect_timeout: Duration::from_secs(10),
            },
        }
    }

    /// The agent this handle parks under and resumes for.
    pub fn agent(&self) -> &str {
        &self.inner.agent
    }

    /// Parks a halted run: its transcript, the request it halted on, its model and turn
    /// count, under this handle's agent, keyed by the request id (which it returns).
    ///
    /// A run that did not halt is [`InboxError::NotPending`]; an id already parked is
    /// [`InboxError::AlreadyParked`]. One statement: nothing is ever half-written.
    pub async fn park(&self, run: &RunResult) -> Result<String, InboxError> {
        let parked = ToPark::of(run, 0)?;
        if insert(&self.inner.pool, &self.inner.agent, &parked).await? {
            Ok(parked.request.id.clone())
        } else {
            Err(InboxError::AlreadyParked(parked.request.id.clone()))
        }
    }

    /// The run parked on request `id`, whatever its state.
    pub async fn get(&self, id: &str) -> Result<Option<Parked>, InboxError> {
        let row = sqlx::query(concat!(
            "SELECT ",
            parked_columns!(),
            " FROM toolnexus_inbox_runs WHERE id = $1"
        ))
        .bind(id)
        .fetch_optional(&self.inner.pool)
        .await?;
        row.as_ref().map(Parked::from_row).transpose()
    }

    /// The runs waiting for an answer, oldest first, of every agent.
    ///
    /// A row that cannot be read back is left out (and logged); [`get`](Self::get) on its
    /// id reports why.
    pub async fn waiting(&self) -> Result<Vec<Parked>, InboxError> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            parked_columns!(),
            " FROM toolnexus_inbox_runs WHERE state = 'waiting' ORDER BY parked_at, id"
        ))
        .fetch_all(&self.inner.pool)
        .await?;
        Ok(readable(&rows))
    }

    /// One page of [`waiting`](Self::waiting): at most `limit` runs from the `offset`-th
    /// (0-based), oldest first, with how many are waiting in all — what a list shows
    /// without reading every waiting run.
    pub async fn waiting_page(
        &self,
        offset: usize,
        limit: usize,
    ) -> Result<WaitingPage, InboxError> {
        let pool = &self.inner.pool;
        let count = sqlx::query_scalar::<_, i64>(
            "SELECT COUNT(*) FROM toolnexus_inbox_runs WHERE state = 'waiting'",
        )
        .fetch_one(pool);
        let page = sqlx::query(concat!(
            "SELECT ",
            parked_columns!(),
            " FROM toolnexus_inbox_runs WHERE state = 'waiting' ORDER BY parked_at, id \
             LIMIT $1 OFFSET $2"
        ))
        .bind(i64::try_from(limit).unwrap_or(i64::MAX))
        .bind(i64::try_from(offset).unwrap_or(i64::MAX))
        .fetch_all(pool);
        let (total, rows) = tokio::try_join!(count, page)?;
        Ok(WaitingPage {
            runs: readable(&rows),
            offset,
            total: usize::try_from(total).unwrap_or(0),
        })
    }

    /// The `limit` runs that changed last among those no longer waiting (answered,
    /// running, done, failed), newest first, of every agent: what was decided lately and
    /// what came of it.
    pub async fn recent(&self, limit: usize) -> Result<Vec<Parked>, InboxError> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            parked_columns!(),
            " FROM toolnexus_inbox_runs WHERE state <> 'waiting' \
             ORDER BY updated_at DESC, id LIMIT $1"
        ))
        .bind(i64::try_from(limit).unwrap_or(i64::MAX))
        .fetch_all(&self.inner.pool)
        .await?;
        Ok(readable(&rows))
    }

    /// Answers a waiting request. The first answer wins: a second one, an answer to an
    /// unknown id, to a run no longer waiting or after the request's `expiresAt` is an
    /// error and changes nothing. When the request carries a form (`data.schema`), an `ok`
    /// answer's data must fit it ([`InboxError::InvalidAnswer`] names the field).
    pub async fn answer(&self, answer: Answer) -> Result<(), InboxError> {
        self.record_answer(answer, None, false).await
    }

    /// [`answer`](Self::answer), recording who answered (kept on the row, with the time).
    pub async fn answer_as(
        &self,
        answer: Answer,
        answered_by: impl Into<String>,
    ) -> Result<(), InboxError> {
        self.record_answer(answer, Some(answered_by.into()), false)
            .await
    }

    /// Declines every waiting request whose `expiresAt` has passed with
    /// `Answer::decline(id, "expired")`, so the resumed run tells the model. Returns how
    /// many it declined.
    pub async fn expire_due(&self) -> Result<usize, InboxError> {
        let due: Vec<String> = sqlx::query_scalar(
            "SELECT id FROM toolnexus_inbox_runs WHERE state = 'waiting' \
             AND expires_at IS NOT NULL AND expires_at <= $1",
        )
        .bind(now_ms())
        .fetch_all(&self.inner.pool)
        .await?;
        let mut expired = 0;
        for id in due {
            match self
                .record_answer(Answer::refuse(&id, Refusal::Expired), None, true)
                .await
            {
                Ok(()) => expired += 1,
                // Answered in the meantime: the person was first.
                Err(InboxError::NotWaiting { .. } | InboxError::UnknownRequest(_)) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(expired)
    }

    async fn record_answer(
        &self,
        answer: Answer,
        answered_by: Option<String>,
        expiring: bool,
    ) -> Result<(), InboxError> {
        let pool = &self.inner.pool;
        let now = now_ms();
        if !expiring && self.answer_at_once(&answer, &answered_by, now).await? {
            return Ok(());
        }
        let row: Option<(String, String, Option<i64>)> = sqlx::query_as(
            "SELECT state, request, expires_at FROM toolnexus_inbox_runs WHERE id = $1",
        )
        .bind(&answer.id)
        .fetch_optional(pool)
        .await?;
        let Some((state, request, expires_at)) = row else {
            return Err(InboxError::UnknownRequest(answer.id));
        };
        let state = ParkedState::parse(&state).ok_or_else(|| InboxError::Corrupt {
            id: answer.id.clone(),
            reason: format!("unknown state {state:?}"),
        })?;
        if state != ParkedState::Waiting {
            return Err(InboxError::NotWaiting {
                id: answer.id,
                state,
            });
        }
        if !expiring && expires_at.is_some_and(|at| at <= now) {
            return Err(InboxError::Expired(answer.id));
        }
        let request: Request = serde_json::from_str(&request).map_err(|e| InboxError::Corrupt {
            id: answer.id.clone(),
            reason: format!("request: {e}"),
        })?;
        check_answer(&request, &answer)?;
        let stored = to_json(&answer.id, &answer)?;
        let sql = match self.inner.engine {
            Engine::Sqlite => ANSWER,
            Engine::Postgres => ANSWER_AND_ANNOUNCE,
        };
        let answered = sqlx::query(sql)
            .bind(stored)
            .bind(answered_by)
            .bind(now)
            .bind(&answer.id)
            .fetch_optional(pool)
            .await?;
        if answered.is_none() {
            // Another answer got in between the read and the write.
            let state = self
                .get(&answer.id)
                .await?
                .map_or(ParkedState::Answered, |p| p.state);
            return Err(InboxError::NotWaiting {
                id: answer.id,
                state,
            });
        }
        // This process's idle workers at once; other processes' heard the NOTIFY.
        self.inner.answered.notify_one();
        Ok(())
    }

    /// The common case in one statement: an answer to a request that is waiting, not
    /// expired, and has no form to check the answer against (or is declined, which skips
    /// the form). `false`: not that case — the caller reads the row to say why, or to check
    /// the form. Rows that merely mention a schema take that slower way too, which is safe.
    async fn answer_at_once(
        &self,
        answer: &Answer,
        answered_by: &Option<String>,
        now: i64,
    ) -> Result<bool, InboxError> {
        let sql = match self.inner.engine {
            Engine::Sqlite => ANSWER_UNCHECKED,
            Engine::Postgres => ANSWER_UNCHECKED_AND_ANNOUNCE,
        };
        let answered = sqlx::query(sql)
            .bind(to_json(&answer.id, answer)?)
            .bind(answered_by)
            .bind(now)
            .bind(&answer.id)
            .bind(i64::from(!answer.ok))
            .fetch_optional(&self.inner.pool)
            .await?;
        if answered.is_some() {
            self.inner.answered.notify_one();
        }
        Ok(answered.is_some())
    }
}

/// Records an answer ($1, by $2, at $3) on run $4 if it is still waiting (and, with more
/// `AND …` conditions, if those hold); a row comes back when it did.
macro_rules! answer {
    ($($condition:expr)?) => {
        concat!(
            "UPDATE toolnexus_inbox_runs SET state = 'answered', answer = $1, answered_by = $2, \
             answered_at = $3, updated_at = $3 WHERE id = $4 AND state = 'waiting'",
            $($condition,)?
            " RETURNING agent"
        )
    };
}

/// In the same statement, the NOTIFY that wakes idle workers of the run's agent in every
/// process (sent when the answer commits). `pg_notify` returns `void`, which no row may
/// carry, so it runs in a lateral subquery of its own.
macro_rules! and_announce {
    ($update:expr) => {
        concat!(
            "WITH answered AS (",
            $update,
            ") SELECT answered.agent FROM answered, \
             LATERAL (SELECT pg_notify('toolnexus_inbox', answered.agent)) AS announced"
        )
    };
}

/// The fast path's extra conditions: not expired at $3, and either declined ($5 = 1) or a
/// request with no form (`data.schema`) in its stored JSON.
macro_rules! unchecked {
    () => {
        " AND (expires_at IS NULL OR expires_at > $3) \
         AND ($5 = 1 OR request NOT LIKE '%\"schema\"%')"
    };
}

const ANSWER: &str = answer!();
const ANSWER_AND_ANNOUNCE: &str = and_announce!(answer!());
const ANSWER_UNCHECKED: &str = answer!(unchecked!());
const ANSWER_UNCHECKED_AND_ANNOUNCE: &str = and_announce!(answer!(unchecked!()));

fn readable(rows: &[sqlx::any::AnyRow]) -> Vec<Parked> {
    rows.iter()
        .filter_map(|row| match Parked::from_row(row) {
            Ok(p) => Some(p),
            Err(e) => {
                tracing::warn!(error = %e, "skipping an unreadable inbox row");
                None
            }
        })
        .collect()
}

pub(crate) fn to_json<T: serde::Serialize>(id: &str, value: &T) -> Result<String, InboxError> {
    serde_json::to_string(value).map_err(|e| InboxError::Corrupt {
        id: id.to_owned(),
        reason: format!("cannot be stored as JSON: {e}"),
    })
}

/// A halted run, ready to be inserted.
pub(crate) struct ToPark<'a> {
    pub(crate) request: &'a Request,
    messages: String,
    request_json: String,
    model: &'a str,
    turns: i64,
    tool: Option<(String, String)>,
    expires_at: Option<i64>,
}

impl<'a> ToPark<'a> {
    /// `earlier_turns`: turns taken before this invocation, when a resumed run halts again.
    pub(crate) fn of(run: &'a RunResult, earlier_turns: i64) -> Result<Self, InboxError> {
        let (RunStatus::Pending, Some(request)) = (run.status, run.pending.as_ref()) else {
            return Err(InboxError::NotPending);
        };
        let expires_at = match &request.expires_at {
            Some(text) => Some(
                parse_rfc3339(text).ok_or_else(|| InboxError::InvalidExpiry {
                    id: request.id.clone(),
                    value: text.clone(),
                })?,
            ),
            None => None,
        };
        let tool = halted_call(run, &request.id)
            .map(|(name, args)| Ok::<_, InboxError>((name.to_owned(), to_json(&request.id, args)?)))
            .transpose()?;
        Ok(ToPark {
            request,
            messages: to_json(&request.id, &run.messages)?,
            request_json: to_json(&request.id, request)?,
            model: &run.model,
            turns: earlier_turns.saturating_add(i64::try_from(run.turns).unwrap_or(i64::MAX)),
            tool,
            expires_at,
        })
    }
}

/// The tool call a run halted on: its name and arguments, from the call records or, failing
/// that, from the transcript's placeholder and the assistant turn that asked for it.
fn halted_call<'r>(run: &'r RunResult, id: &str) -> Option<(&'r str, &'r Value)> {
    let parks_here = |call: &ToolCallRecord| call.pending().is_some_and(|p| p.id == id);
    if let Some(call) = run.tool_calls.iter().find(|c| parks_here(c)) {
        return Some((&call.name, &call.args));
    }
    let call_id = run.messages.iter().rev().find_map(|m| match m {
        Message::ToolResults { results } => results
            .iter()
            .find(|r| r.pending.as_ref().is_some_and(|p| p.id == id))
            .map(|r| r.call_id.as_str()),
        _ => None,
    })?;
    run.messages.iter().rev().find_map(|m| match m {
        Message::Assistant { tool_calls, .. } => tool_calls
            .iter()
            .find(|c| c.id == call_id)
            .map(|c| (c.name.as_str(), &c.args)),
        _ => None,
    })
}

/// Inserts a waiting row; `false` when the id is already parked.
pub(crate) async fn insert<'c, E>(db: E, agent: &str, run: &ToPark<'_>) -> Result<bool, InboxError>
where
    E: Executor<'c, Database = Any>,
{
    let now = now_ms();
    let (tool_name, tool_args) = run.tool.clone().unzip();
    let inserted = sqlx::query(
        "INSERT INTO toolnexus_inbox_runs (id, agent, state, request, messages, model, turns, \
         tool_name, tool_args, parked_at, expires_at, attempts, updated_at) \
         VALUES ($1, $2, 'waiting', $3, $4, $5, $6, $7, $8, $9, $10, 0, $9) \
         ON CONFLICT (id) DO NOTHING",
    )
    .bind(&run.request.id)
    .bind(agent)
    .bind(&run.request_json)
    .bind(&run.messages)
    .bind(run.model)
    .bind(run.turns)
    .bind(tool_name)
    .bind(tool_args)
    .bind(now)
    .bind(run.expires_at)
    .execute(db)
    .await?;
    Ok(inserted.rows_affected() == 1)
}

pub(crate) fn lease_ms(inbox: &Inbox) -> i64 {
    ms(inbox.inner.lease)
}
