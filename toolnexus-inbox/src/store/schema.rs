//! The inbox's tables and their versioned migrations, applied when a database is opened.
//!
//! Every migration but the last is a list of statements both engines accept (only `BIGINT`
//! and `TEXT` columns; times are milliseconds since the Unix epoch); the last constrains
//! the state columns, each engine its own way. A database records the newest
//! version applied in `toolnexus_inbox_schema`; one recording a version this crate does not
//! know was made by a newer release and is refused rather than misread.

use sqlx::{AnyConnection, Row};

use super::{Dialect, Engine};
use crate::error::InboxError;
use crate::records::state::{DeliveryState, ParkedState};

/// The migrations, in order; migration `n` (1-based) brings a database to version `n`.
const MIGRATIONS: &[&[&str]] = &[&[
    "CREATE TABLE toolnexus_inbox_runs (
        id TEXT PRIMARY KEY,
        agent TEXT NOT NULL,
        state TEXT NOT NULL,
        request TEXT NOT NULL,
        messages TEXT NOT NULL,
        model TEXT NOT NULL,
        turns BIGINT NOT NULL,
        tool_name TEXT,
        tool_args TEXT,
        parked_at BIGINT NOT NULL,
        expires_at BIGINT,
        answer TEXT,
        answered_by TEXT,
        answered_at BIGINT,
        attempts BIGINT NOT NULL DEFAULT 0,
        lease_until BIGINT,
        last_error TEXT,
        result TEXT,
        next_id TEXT,
        updated_at BIGINT NOT NULL
    )",
    "CREATE INDEX toolnexus_inbox_runs_claim ON toolnexus_inbox_runs (agent, state, answered_at)",
    "CREATE INDEX toolnexus_inbox_runs_expiry ON toolnexus_inbox_runs (state, expires_at)",
    "CREATE INDEX toolnexus_inbox_runs_recent ON toolnexus_inbox_runs (updated_at)",
], &[
    // A claim walks this index in its `ORDER BY answered_at, id` for one state at a time,
    // so finding the next run never sorts the answered ones.
    "DROP INDEX toolnexus_inbox_runs_claim",
    "CREATE INDEX toolnexus_inbox_runs_claim_order \
     ON toolnexus_inbox_runs (agent, state, answered_at, id)",
    // The page lists the waiting runs oldest first, a page at a time.
    "CREATE INDEX toolnexus_inbox_runs_waiting ON toolnexus_inbox_runs (state, parked_at, id)",
], &[
    // A halted turn can wait on several calls at once: each request is a row of its own,
    // answered on its own, and the run row (keyed by its first request's id, as every run
    // of the earlier versions already is) keeps the transcript, the claim and the outcome.
    "CREATE TABLE toolnexus_inbox_requests (
        id TEXT PRIMARY KEY,
        run_id TEXT NOT NULL REFERENCES toolnexus_inbox_runs (id),
        position BIGINT NOT NULL,
        request TEXT NOT NULL,
        tool_name TEXT,
        tool_args TEXT,
        parked_at BIGINT NOT NULL,
        expires_at BIGINT,
        answer TEXT,
        answered_by TEXT,
        answered_at BIGINT
    )",
    "INSERT INTO toolnexus_inbox_requests (id, run_id, position, request, tool_name, \
     tool_args, parked_at, expires_at, answer, answered_by, answered_at) \
     SELECT id, id, 0, request, tool_name, tool_args, parked_at, expires_at, answer, \
     answered_by, answered_at FROM toolnexus_inbox_runs",
    "CREATE INDEX toolnexus_inbox_requests_run ON toolnexus_inbox_requests (run_id, position)",
    // The open requests (no answer yet) oldest first, a page at a time, and those due.
    "CREATE INDEX toolnexus_inbox_requests_open \
     ON toolnexus_inbox_requests (answered_at, parked_at, id)",
    "CREATE INDEX toolnexus_inbox_requests_expiry \
     ON toolnexus_inbox_requests (answered_at, expires_at)",
    // What moved to the requests leaves the runs, so each fact has one place; SQLite drops
    // no column an index still names.
    "DROP INDEX toolnexus_inbox_runs_expiry",
    "DROP INDEX toolnexus_inbox_runs_waiting",
    "ALTER TABLE toolnexus_inbox_runs DROP COLUMN request",
    "ALTER TABLE toolnexus_inbox_runs DROP COLUMN tool_name",
    "ALTER TABLE toolnexus_inbox_runs DROP COLUMN tool_args",
    "ALTER TABLE toolnexus_inbox_runs DROP COLUMN expires_at",
    "ALTER TABLE toolnexus_inbox_runs DROP COLUMN answer",
    "ALTER TABLE toolnexus_inbox_runs DROP COLUMN answered_by",
    // The run's request ids in call order (a JSON array); NULL on a run parked before,
    // which has one request, its own id.
    "ALTER TABLE toolnexus_inbox_runs ADD COLUMN request_ids TEXT",
], &[
    // The audit trail: appended in the transaction of each change, never updated. `seq`
    // numbers a run's entries in order (the clock alone could tie); runs parked before
    // this version start their trail at their next change.
    "CREATE TABLE toolnexus_inbox_audit (
        run_id TEXT NOT NULL,
        seq BIGINT NOT NULL,
        at BIGINT NOT NULL,
        kind TEXT NOT NULL,
        request_id TEXT,
        actor TEXT,
        attempt BIGINT,
        detail TEXT,
        PRIMARY KEY (run_id, seq)
    )",
], &[
    // The outbox: a notification per webhook, written in the transaction of the change it
    // tells of, then delivered (claimed under a lease, retried at `next_at`). Its id is the
    // `webhook-id` receivers deduplicate by.
    "CREATE TABLE toolnexus_inbox_outbox (
        id TEXT PRIMARY KEY,
        run_id TEXT NOT NULL,
        request_id TEXT,
        event TEXT NOT NULL,
        target TEXT NOT NULL,
        body TEXT NOT NULL,
        state TEXT NOT NULL,
        attempts BIGINT NOT NULL,
        next_at BIGINT NOT NULL,
        lease_until BIGINT,
        last_status BIGINT,
        last_error TEXT,
        created_at BIGINT NOT NULL,
        delivered_at BIGINT
    )",
    "CREATE INDEX toolnexus_inbox_outbox_due ON toolnexus_inbox_outbox (target, state, next_at)",
    "CREATE INDEX toolnexus_inbox_outbox_run ON toolnexus_inbox_outbox (run_id, created_at)",
    // When a request was escalated, and who it added to the responders (a JSON list).
    "ALTER TABLE toolnexus_inbox_requests ADD COLUMN escalated_at BIGINT",
    "ALTER TABLE toolnexus_inbox_requests ADD COLUMN escalated_to TEXT",
]];

/// The migrations after the state constraints, in order, each a list of statements both
/// engines accept; the first brings a database to version `MIGRATIONS.len() + 2`.
const LATER: &[&[&str]] = &[
    &[
        // Notes a host keeps beside the runs ([`Inbox::note`](crate::Inbox::note)): a small
        // text under a key of the host's choosing, such as the protocol task a run serves.
        "CREATE TABLE toolnexus_inbox_notes (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL,
        updated_at BIGINT NOT NULL
    )",
    ],
    &[
        // The steps a resume completed (a model reply, a tool call's result), each written
        // only while its worker's claim holds, so a worker taking the run over replays them
        // rather than asking the model again or running the call again.
        "CREATE TABLE toolnexus_inbox_journal (
        run_id TEXT NOT NULL,
        step_key TEXT NOT NULL,
        step TEXT NOT NULL,
        attempt BIGINT NOT NULL,
        at BIGINT NOT NULL,
        PRIMARY KEY (run_id, step_key)
    )",
    ],
    &[
        // What each door (A2A, AG-UI, MCP, …) keeps about a run it serves, under its own id
        // for it (a task id, a thread id): one typed record per door and id, in place of
        // notes under key prefixes each door chose.
        "CREATE TABLE toolnexus_inbox_doors (
        door TEXT NOT NULL,
        id TEXT NOT NULL,
        record TEXT NOT NULL,
        updated_at BIGINT NOT NULL,
        PRIMARY KEY (door, id)
    )",
        "INSERT INTO toolnexus_inbox_doors (door, id, record, updated_at) \
         SELECT 'a2a', substr(key, 10), value, updated_at FROM toolnexus_inbox_notes \
         WHERE key LIKE 'a2a-task:%'",
        "INSERT INTO toolnexus_inbox_doors (door, id, record, updated_at) \
         SELECT 'agui', substr(key, 13), value, updated_at FROM toolnexus_inbox_notes \
         WHERE key LIKE 'agui-thread:%'",
        "INSERT INTO toolnexus_inbox_doors (door, id, record, updated_at) \
         SELECT 'mcp', substr(key, 10), value, updated_at FROM toolnexus_inbox_notes \
         WHERE key LIKE 'mcp-task/%'",
        "DELETE FROM toolnexus_inbox_notes WHERE key LIKE 'a2a-task:%' \
         OR key LIKE 'agui-thread:%' OR key LIKE 'mcp-task/%'",
    ],
    &[
        // Every person's answer to a request as it came (a JSON list): the approvals a
        // quorum collects before the request is answered, each with who gave it, for whom,
        // by which rule, and its receipt.
        "ALTER TABLE toolnexus_inbox_requests ADD COLUMN votes TEXT",
        // Answering rights one person handed another for a window. `from_person` is the
        // giver as they were when they gave them (id, name, groups: a JSON object), since
        // the rights are theirs; ids are kept lowercased, as people's ids compare.
        "CREATE TABLE toolnexus_inbox_delegations (
        id TEXT PRIMARY KEY,
        from_id TEXT NOT NULL,
        from_person TEXT NOT NULL,
        to_id TEXT NOT NULL,
        until_at BIGINT NOT NULL,
        created_at BIGINT NOT NULL,
        revoked_at BIGINT
    )",
        "CREATE INDEX toolnexus_inbox_delegations_to \
         ON toolnexus_inbox_delegations (to_id, until_at)",
        "CREATE INDEX toolnexus_inbox_delegations_from \
         ON toolnexus_inbox_delegations (from_id, until_at)",
    ],
    &[
        // Who asked for the run, when a door identified them: the person a request whose
        // rule keeps duties apart refuses as its approver. Inherited by the runs it became.
        "ALTER TABLE toolnexus_inbox_runs ADD COLUMN requested_by TEXT",
    ],
    &[
        // A run a resume became is found from the run before it in one lookup, so a door
        // walks from a waiting run back to the first run it keeps a record of.
        "CREATE INDEX toolnexus_inbox_runs_next ON toolnexus_inbox_runs (next_id)",
    ],
    &[
        // Posts to URLs a caller gave at run time ([`Inbox::post`](crate::Inbox::post)):
        // `seq` orders a series, which is delivered one post at a time; `headers` (a JSON
        // list of name and value pairs) hold the caller's credentials for the receiver.
        // The state constraint is written out, both engines taking a `CHECK` in `CREATE
        // TABLE`; a test holds it to `DeliveryState`'s spellings.
        "CREATE TABLE toolnexus_inbox_posts (
        id TEXT PRIMARY KEY,
        series TEXT NOT NULL,
        seq BIGINT NOT NULL,
        url TEXT NOT NULL,
        headers TEXT NOT NULL,
        content_type TEXT NOT NULL,
        body TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
        attempts BIGINT NOT NULL,
        next_at BIGINT NOT NULL,
        lease_until BIGINT,
        created_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        delivered_at BIGINT,
        last_status BIGINT,
        last_error TEXT
    )",
        // A series in order, and whether an earlier post of it is still pending.
        "CREATE INDEX toolnexus_inbox_posts_series \
         ON toolnexus_inbox_posts (series, state, seq, id)",
        // The pending posts whose attempt is due.
        "CREATE INDEX toolnexus_inbox_posts_due ON toolnexus_inbox_posts (state, next_at, id)",
    ],
];

/// The schema version this crate reads and writes: the shared migrations, the state
/// constraints, then the later migrations.
pub(crate) const LATEST: i64 = (MIGRATIONS.len() + 1 + LATER.len()) as i64;

/// The last migration: a state column takes only the spellings of its enum. PostgreSQL
/// adds `CHECK` constraints; SQLite cannot add one to an existing table, so triggers refuse
/// the same writes. A state added to an enum later needs a migration replacing these.
fn state_checks(engine: Engine) -> Vec<String> {
    let parked: Vec<&str> = ParkedState::ALL.iter().map(|s| s.as_str()).collect();
    let delivery: Vec<&str> = DeliveryState::ALL.iter().map(|s| s.as_str()).collect();
    let mut statements = Vec::new();
    for (table, states) in [
        ("toolnexus_inbox_runs", parked),
        ("toolnexus_inbox_outbox", delivery),
    ] {
        let list = states
            .iter()
            .map(|s| format!("'{s}'"))
            .collect::<Vec<_>>()
            .join(", ");
        match engine {
            Engine::Postgres => statements.push(format!(
                "ALTER TABLE {table} ADD CONSTRAINT {table}_state CHECK (state IN ({list}))"
            )),
            Engine::Sqlite => {
                for (name, on) in [("insert", "INSERT"), ("update", "UPDATE OF state")] {
                    statements.push(format!(
                        "CREATE TRIGGER {table}_state_{name} BEFORE {on} ON {table} \
                         WHEN NEW.state NOT IN ({list}) \
                         BEGIN SELECT RAISE(ABORT, '{table}: not a state'); END"
                    ));
                }
            }
        }
    }
    statements
}

/// Brings the database to [`LATEST`], one transaction for all of it, so concurrent openers
/// (several workers starting at once) apply each migration exactly once.
pub(crate) async fn migrate(conn: &mut AnyConnection, dialect: &Dialect) -> Result<(), InboxError> {
    use sqlx::Connection;
    let mut tx = conn.begin_with(dialect.begin_write).await?;
    if let Some(lock) = dialect.migration_lock {
        sqlx::query(lock).execute(&mut *tx).await?;
    }
    sqlx::query("CREATE TABLE IF NOT EXISTS toolnexus_inbox_schema (version BIGINT NOT NULL)")
        .execute(&mut *tx)
        .await?;
    let found: Option<i64> = sqlx::query("SELECT MAX(version) AS v FROM toolnexus_inbox_schema")
        .fetch_one(&mut *tx)
        .await?
        .try_get("v")?;
    let found = found.unwrap_or(0);
    if found > LATEST {
        return Err(InboxError::SchemaTooNew {
            found,
            supported: LATEST,
        });
    }
    let last = state_checks(dialect.engine);
    let all = MIGRATIONS
        .iter()
        .map(|statements| statements.iter().map(|s| (*s).to_owned()).collect())
        .chain(std::iter::once(last))
        .chain(
            LATER
                .iter()
                .map(|statements| statements.iter().map(|s| (*s).to_owned()).collect()),
        );
    for (index, statements) in all.enumerate().skip(found as usize) {
        for statement in statements {
            sqlx::query(sqlx::AssertSqlSafe(statement))
                .execute(&mut *tx)
                .await?;
        }
        let version = index as i64 + 1;
        sqlx::query("DELETE FROM toolnexus_inbox_schema")
            .execute(&mut *tx)
            .await?;
        sqlx::query("INSERT INTO toolnexus_inbox_schema (version) VALUES ($1)")
            .bind(version)
            .execute(&mut *tx)
            .await?;
    }
    tx.commit().await?;
    Ok(())
}

// On an in-memory SQLite database; the suite checks both engines.
#[cfg(all(test, feature = "sqlite"))]
mod tests {
    use std::time::Duration;

    use super::super::{PoolSettings, SqliteSync, Store};
    use crate::records::state::DeliveryState;

    #[tokio::test]
    async fn the_state_columns_take_only_their_enums_spellings() {
        let settings = PoolSettings {
            max_connections: Some(1),
            sqlite_sync: SqliteSync::Normal,
            connect_timeout: Duration::from_secs(5),
        };
        let store = Store::open("sqlite::memory:", &settings).await.unwrap();
        let run = "INSERT INTO toolnexus_inbox_runs (id, agent, state, messages, model, turns, \
                   parked_at, attempts, updated_at) VALUES ('r', 'a', $1, '[]', 'm', 0, 0, 0, 0)";
        let refused = sqlx::query(run).bind("paused").execute(&store.pool).await;
        assert!(refused.is_err(), "a run parked as `paused`");
        sqlx::query(run)
            .bind("waiting")
            .execute(&store.pool)
            .await
            .unwrap();
        let renamed = sqlx::query("UPDATE toolnexus_inbox_runs SET state = 'resting'")
            .execute(&store.pool)
            .await;
        assert!(renamed.is_err(), "a run moved to `resting`");
        let note = "INSERT INTO toolnexus_inbox_outbox (id, run_id, event, target, body, state, \
                    attempts, next_at, created_at) VALUES ('n', 'r', 'e', 't', '{}', $1, 0, 0, 0)";
        let refused = sqlx::query(note).bind("sent").execute(&store.pool).await;
        assert!(refused.is_err(), "a notification written as `sent`");
        sqlx::query(note)
            .bind("pending")
            .execute(&store.pool)
            .await
            .unwrap();
        let post = "INSERT INTO toolnexus_inbox_posts (id, series, seq, url, headers, \
                    content_type, body, state, attempts, next_at, created_at, expires_at) \
                    VALUES ($2, 's', 1, 'u', '[]', 't', 'b', $1, 0, 0, 0, 0)";
        let refused = sqlx::query(post)
            .bind("sent")
            .bind("p0")
            .execute(&store.pool)
            .await;
        assert!(refused.is_err(), "a post written as `sent`");
        for (n, state) in DeliveryState::ALL.iter().enumerate() {
            sqlx::query(post)
                .bind(state.as_str())
                .bind(format!("p{}", n + 1))
                .execute(&store.pool)
                .await
                .unwrap();
        }
    }
}
