//! What differs between the engines, chosen once when a database is opened: how a writing
//! transaction begins, how concurrent claims pass each other by, whether answers are
//! announced to other processes, and how the schema's migrations are serialised.

use std::sync::LazyLock;

use super::{outbox, posts, requests, runs, Engine};

/// The PostgreSQL channel answers are announced on, so idle workers wake at once.
pub(crate) const CHANNEL: &str = "toolnexus_inbox";

/// One engine's statements where the engines differ.
pub(crate) struct Dialect {
    pub(crate) engine: Engine,
    /// How a transaction that writes begins.
    pub(crate) begin_write: &'static str,
    /// The claims of the oldest run and of a named run, each with its audit entry, in one
    /// request.
    pub(crate) claims: Claims,
    /// Records a resumed run's end, its journal cleared and its audit entry, in one
    /// statement ([`runs::finish_audited`]); `None` where a statement cannot write in a
    /// `WITH` (SQLite), and the outcome is a transaction.
    pub(crate) finish_audited: Option<&'static LazyLock<String>>,
    /// Records a resumed run's end, its journal cleared and its audit entry, by statements
    /// sent together inside the outcome's transaction ([`runs::finish_batched`]); `None`
    /// where statements travel one at a time (PostgreSQL), and they are sent apart.
    pub(crate) finish_batched: Option<&'static str>,
    /// [`finish_batched`](Self::finish_batched) as its whole transaction in one request
    /// ([`runs::finish_alone_sql`]), for a run that ended with no webhook to tell.
    pub(crate) finish_alone: Option<&'static LazyLock<String>>,
    /// Records an answer that resolves its request, the run marked answered when it was
    /// its last and the audit entry, in one statement ([`requests::answer_recorded`]), or on
    /// SQLite, where a statement cannot write in a `WITH`, in statements sent together.
    pub(crate) answer_recorded: Option<&'static LazyLock<String>>,
    /// Marks a run answered once its last request is ([`runs::mark_answered`]).
    pub(crate) mark_answered: &'static LazyLock<String>,
    /// Claims a batch of due notifications ([`outbox::claim`]).
    pub(crate) claim_deliveries: &'static LazyLock<String>,
    /// Claims a batch of due posts ([`posts::claim`]).
    pub(crate) claim_posts: &'static LazyLock<String>,
    /// Whether a run's last answer is announced on [`CHANNEL`] to every process.
    pub(crate) announces: bool,
    /// Serialises concurrent migrations, when opening alone does not.
    pub(crate) migration_lock: Option<&'static str>,
    /// The connections a pool opens by default.
    pub(crate) default_pool_size: u32,
}

/// Appended to the subqueries that choose rows to claim on PostgreSQL: concurrent
/// workers each take another row instead of queueing on one (SQLite's writers take turns
/// anyway).
const SKIP_LOCKED: &str = " FOR UPDATE SKIP LOCKED";

static CLAIM_NEXT_RUN_POSTGRES: LazyLock<String> =
    LazyLock::new(|| runs::claim_next_sql(SKIP_LOCKED));
// The claims with their audit entry in one statement (see `runs::audited`).
static CLAIM_NEXT_RUN_AUDITED_POSTGRES: LazyLock<String> =
    LazyLock::new(|| runs::audited(&CLAIM_NEXT_RUN_POSTGRES, 7, true));
static CLAIM_RUN_OF_AUDITED_POSTGRES: LazyLock<String> =
    LazyLock::new(|| runs::audited(&runs::CLAIM_RUN_OF, 8, false));
static ANSWER_RECORDED_POSTGRES: LazyLock<String> =
    LazyLock::new(|| requests::answer_recorded_sql(CHANNEL, super::audit::CHANGED));
static ANSWER_RECORDED_SQLITE: LazyLock<String> =
    LazyLock::new(|| requests::ANSWER_RECORDED_BATCHED.to_owned());
// A claim's transaction whole on SQLite: its statements sent together in one request.
static CLAIM_NEXT_RUN_BATCHED_SQLITE: LazyLock<String> = LazyLock::new(|| {
    runs::claim_batched_sql(
        &runs::next_target("", super::planning::SQLITE_STABLE),
        7,
        SQLITE.begin_write,
    )
});
static CLAIM_RUN_OF_BATCHED_SQLITE: LazyLock<String> =
    LazyLock::new(|| runs::claim_batched_sql(runs::RUN_OF_TARGET, 8, SQLITE.begin_write));
static FINISH_ALONE_SQLITE: LazyLock<String> =
    LazyLock::new(|| runs::finish_alone_sql(SQLITE.begin_write));
static FINISH_AUDITED_POSTGRES: LazyLock<String> =
    LazyLock::new(|| runs::finish_audited_sql(super::audit::CHANGED));
static MARK_ANSWERED_SQLITE: LazyLock<String> = LazyLock::new(|| runs::MARK_ANSWERED.to_owned());
// In the same statement, the NOTIFY that wakes idle workers of the run's agent in every
// process (sent when the answer commits). `pg_notify` returns `void`, which no row may
// carry, so it runs in a lateral subquery of its own.
static MARK_ANSWERED_POSTGRES: LazyLock<String> = LazyLock::new(|| {
    format!(
        "WITH answered AS ({}) SELECT answered.agent FROM answered, \
         LATERAL (SELECT pg_notify('{CHANNEL}', answered.agent)) AS announced",
        runs::MARK_ANSWERED
    )
});
static CLAIM_DELIVERIES_SQLITE: LazyLock<String> = LazyLock::new(|| outbox::claim_sql(""));
static CLAIM_DELIVERIES_POSTGRES: LazyLock<String> =
    LazyLock::new(|| outbox::claim_sql(SKIP_LOCKED));
static CLAIM_POSTS_SQLITE: LazyLock<String> = LazyLock::new(|| posts::claim_sql(""));
static CLAIM_POSTS_POSTGRES: LazyLock<String> = LazyLock::new(|| posts::claim_sql(SKIP_LOCKED));

/// A claim statement that appends its own audit entry.
#[derive(Clone, Copy)]
pub(crate) struct AuditedClaims {
    pub(crate) next: &'static LazyLock<String>,
    pub(crate) run_of: &'static LazyLock<String>,
}

/// How an engine claims a run with its audit entry in one request.
#[derive(Clone, Copy)]
pub(crate) enum Claims {
    /// One statement writing in a `WITH` ([`runs::audited`]), on any connection of the pool
    /// (PostgreSQL).
    Audited(AuditedClaims),
    /// The whole transaction as statements sent together ([`runs::claim_batched_sql`]),
    /// with the run's answers, on the connection of the turn to write (SQLite, whose
    /// statements cannot write in a `WITH`).
    Batched(AuditedClaims),
}

static SQLITE: Dialect = Dialect {
    engine: Engine::Sqlite,
    // IMMEDIATE takes the write lock up front: a deferred transaction that read first
    // fails, instead of waiting, when another writer committed since.
    begin_write: "BEGIN IMMEDIATE",
    claims: Claims::Batched(AuditedClaims {
        next: &CLAIM_NEXT_RUN_BATCHED_SQLITE,
        run_of: &CLAIM_RUN_OF_BATCHED_SQLITE,
    }),
    finish_audited: None,
    finish_batched: Some(runs::FINISH_BATCHED),
    finish_alone: Some(&FINISH_ALONE_SQLITE),
    answer_recorded: Some(&ANSWER_RECORDED_SQLITE),
    mark_answered: &MARK_ANSWERED_SQLITE,
    claim_deliveries: &CLAIM_DELIVERIES_SQLITE,
    claim_posts: &CLAIM_POSTS_SQLITE,
    announces: false,
    // The write transaction a migration runs in locks the whole database.
    migration_lock: None,
    default_pool_size: 4,
};

static POSTGRES: Dialect = Dialect {
    engine: Engine::Postgres,
    begin_write: "BEGIN",
    claims: Claims::Audited(AuditedClaims {
        next: &CLAIM_NEXT_RUN_AUDITED_POSTGRES,
        run_of: &CLAIM_RUN_OF_AUDITED_POSTGRES,
    }),
    finish_audited: Some(&FINISH_AUDITED_POSTGRES),
    finish_batched: None,
    finish_alone: None,
    answer_recorded: Some(&ANSWER_RECORDED_POSTGRES),
    mark_answered: &MARK_ANSWERED_POSTGRES,
    claim_deliveries: &CLAIM_DELIVERIES_POSTGRES,
    claim_posts: &CLAIM_POSTS_POSTGRES,
    announces: true,
    // CREATE TABLE IF NOT EXISTS races on PostgreSQL; the advisory lock serialises openers.
    migration_lock: Some("SELECT pg_advisory_xact_lock(7317052041)"),
    default_pool_size: 10,
};

impl Dialect {
    /// A text expression of the JSON held in `column` at the path bound as parameter
    /// `$param` (spelled by [`json_path`](Self::json_path)): NULL where there is nothing.
    pub(crate) fn json_text(&self, column: &str, param: usize) -> String {
        match self.engine {
            Engine::Sqlite => format!("json_extract({column}, ${param})"),
            // The path travels as text and becomes a text[] here, so the driver binds a
            // plain string on both engines.
            Engine::Postgres => {
                format!("({column}::jsonb #>> CAST(CAST(${param} AS TEXT) AS TEXT[]))")
            }
        }
    }

    /// `text` with its ASCII letters lowercased and nothing else changed: how people's
    /// ids compare (`eq_ignore_ascii_case`). SQLite's `lower` does just that; PostgreSQL's
    /// folds every letter its locale knows, so it translates the ASCII ones instead.
    pub(crate) fn ascii_lower(&self, text: &str) -> String {
        match self.engine {
            Engine::Sqlite => format!("lower({text})"),
            Engine::Postgres => format!(
                "translate({text}, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')"
            ),
        }
    }

    /// The path of object `keys` in this engine's spelling, to bind for
    /// [`json_text`](Self::json_text). A key's quotes and commas would break the spelling:
    /// door code names the keys, never a caller.
    pub(crate) fn json_path(&self, keys: &[&str]) -> String {
        match self.engine {
            Engine::Sqlite => keys.iter().fold("$".to_owned(), |path, key| {
                format!("{path}.\"{}\"", key.replace('"', ""))
            }),
            Engine::Postgres => {
                let keys: Vec<String> = keys
                    .iter()
                    .map(|key| format!("\"{}\"", key.replace(['"', '\\'], "")))
                    .collect();
                format!("{{{}}}", keys.join(","))
            }
        }
    }

    pub(crate) fn of(engine: Engine) -> &'static Dialect {
        match engine {
            Engine::Sqlite => &SQLITE,
            Engine::Postgres => &POSTGRES,
        }
    }
}
