//! The inbox's storage: every SQL statement it runs lives under this module, one module
//! per table ([`runs`], [`requests`], [`outbox`], [`posts`], [`audit`]), with the rows they read as
//! `FromRow` types ([`row`]). Which engine a database speaks is decided once, when it is opened: the
//! [`Store`] holds its [`Dialect`] (the few statements that differ between SQLite and
//! PostgreSQL), and nothing outside this module looks at the engine again.
//!
//! States are bound from their enums, never spelled in a statement; the schema's `CHECK`
//! constraints (triggers, on SQLite) refuse any other spelling.
//!
//! How a URL becomes a pool: SQLite is created if missing, in WAL mode, and
//! `sqlite::memory:` is a shared in-memory database.

pub(crate) mod audit;
pub(crate) mod delegations;
mod dialect;
pub(crate) mod doors;
pub(crate) mod journal;
pub(crate) mod notes;
pub(crate) mod outbox;
mod planning;
pub(crate) mod posts;
pub(crate) mod requests;
mod row;
pub(crate) mod runs;
pub(crate) mod schema;
pub(crate) mod shared;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use sqlx::any::AnyPoolOptions;
use sqlx::{Any, AnyPool, Transaction};
use tokio::sync::Notify;

use crate::error::InboxError;
pub(crate) use dialect::{AuditedClaims, Claims, Dialect};

/// The database engine behind a pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Engine {
    Sqlite,
    Postgres,
}

/// How hard SQLite works to keep a commit across a power cut (`PRAGMA synchronous`).
/// PostgreSQL follows its server's own settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum SqliteSync {
    /// WAL's usual setting: a commit survives a crash of the process; a power cut may lose
    /// the last commits, never corrupt the file.
    #[default]
    Normal,
    /// Every commit is on disk before it returns (an fsync per commit).
    Full,
}

/// What opening a pool needs beyond the URL.
#[derive(Clone)]
pub(crate) struct PoolSettings {
    pub(crate) max_connections: Option<u32>,
    pub(crate) sqlite_sync: SqliteSync,
    pub(crate) connect_timeout: Duration,
}

/// The engine a URL names, and the URL sqlx is given for it, when this build has it.
fn resolve(url: &str) -> Result<(Engine, String, bool), InboxError> {
    resolve_in(url, Engine::built)
}

/// [`resolve`] for a build that has the engines `built` says it has: the tests try a build
/// without an engine without compiling one.
fn resolve_in(
    url: &str,
    built: impl Fn(Engine) -> bool,
) -> Result<(Engine, String, bool), InboxError> {
    let resolved = name(url)?;
    if !built(resolved.0) {
        return Err(InboxError::EngineNotBuilt {
            engine: resolved.0.feature(),
        });
    }
    Ok(resolved)
}

impl Engine {
    /// Whether this build has the engine: its feature was on when the crate compiled.
    fn built(self) -> bool {
        match self {
            Engine::Sqlite => cfg!(feature = "sqlite"),
            Engine::Postgres => cfg!(feature = "postgres"),
        }
    }

    /// The crate feature that builds the engine in.
    fn feature(self) -> &'static str {
        match self {
            Engine::Sqlite => "sqlite",
            Engine::Postgres => "postgres",
        }
    }
}

/// The engine a URL names, and the URL sqlx is given for it.
fn name(url: &str) -> Result<(Engine, String, bool), InboxError> {
    static MEMORY: AtomicU64 = AtomicU64::new(0);
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        return Ok((Engine::Postgres, url.to_owned(), false));
    }
    let Some(rest) = url.strip_prefix("sqlite:") else {
        return Err(InboxError::UnsupportedUrl(redact(url)));
    };
    let path = rest.strip_prefix("//").unwrap_or(rest);
    if path == ":memory:" || path.is_empty() {
        // sqlx gives every connection of `sqlite::memory:` a database of its own; a named
        // shared-cache memory database is one database for the whole pool.
        let n = MEMORY.fetch_add(1, Ordering::Relaxed);
        let name = format!(
            "sqlite:file:toolnexus-inbox-{}-{n}?mode=memory&cache=shared",
            std::process::id()
        );
        return Ok((Engine::Sqlite, name, true));
    }
    let with_mode = if path.contains("mode=") {
        url.to_owned()
    } else if path.contains('?') {
        format!("{url}&mode=rwc")
    } else {
        format!("{url}?mode=rwc")
    };
    Ok((Engine::Sqlite, with_mode, false))
}

/// A URL fit for an error message: the password, if any, replaced.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let userinfo = &url[scheme + 3..at];
            match userinfo.split_once(':') {
                Some((user, _)) => format!("{}{user}:***{}", &url[..scheme + 3], &url[at..]),
                None => url.to_owned(),
            }
        }
        _ => url.to_owned(),
    }
}

/// How long a connection may sit idle in the pool and still be used without a ping first:
/// one back from a statement this recently was alive then, and one that broke meanwhile
/// fails its next statement, which the worker retries.
const TRUSTED_IDLE: Duration = Duration::from_secs(10);

/// Opens the pool and brings the schema up to date.
async fn open_pool(
    url: &str,
    settings: &PoolSettings,
) -> Result<(Engine, AnyPool, String), InboxError> {
    sqlx::any::install_default_drivers();
    let (engine, url, memory) = resolve(url)?;
    // sqlx pings a connection as it leaves the pool and again as it goes back: two round
    // trips more for every statement a worker runs on the pool. One that came back a moment
    // ago answered its ping then; only one idle for a while is asked again before use.
    let mut options = AnyPoolOptions::new()
        .acquire_timeout(settings.connect_timeout)
        .test_before_acquire(false)
        .before_acquire(|conn, meta| {
            Box::pin(async move {
                if meta.idle_for >= TRUSTED_IDLE {
                    sqlx::Connection::ping(conn).await?;
                }
                Ok(true)
            })
        });
    let dialect = Dialect::of(engine);
    options = options.max_connections(
        settings
            .max_connections
            .unwrap_or(dialect.default_pool_size),
    );
    if memory {
        // The memory database lives as long as one connection to it does.
        options = options
            .min_connections(1)
            .idle_timeout(None)
            .max_lifetime(None);
    }
    if engine == Engine::Sqlite {
        let sync = sync_pragma(settings.sqlite_sync);
        options = options.after_connect(move |conn, _| {
            Box::pin(async move {
                // Many workers share one file: wait for the write lock rather than fail.
                sqlx::query("PRAGMA busy_timeout = 30000")
                    .execute(&mut *conn)
                    .await?;
                sqlx::query(sync).execute(&mut *conn).await?;
                Ok(())
            })
        });
    }
    let pool = options.connect(&url).await?;
    let mut conn = pool.acquire().await?;
    if engine == Engine::Sqlite && !memory {
        // WAL lets readers (the page, listings) go on while a worker writes; the setting
        // is stored in the file, so once is enough.
        sqlx::query("PRAGMA journal_mode = WAL")
            .execute(&mut *conn)
            .await?;
    }
    schema::migrate(&mut conn, dialect).await?;
    drop(conn);
    Ok((engine, pool, url))
}

/// `value` as a JSON column holds it.
pub(crate) fn json<T: serde::Serialize>(id: &str, value: &T) -> Result<String, InboxError> {
    serde_json::to_string(value).map_err(|e| InboxError::Corrupt {
        id: id.to_owned(),
        reason: format!("cannot be stored as JSON: {e}"),
    })
}

/// A nullable JSON column read back.
pub(crate) fn decode_json<T: serde::de::DeserializeOwned>(
    column: Option<&str>,
) -> Result<Option<T>, serde_json::Error> {
    column.map(serde_json::from_str).transpose()
}

/// A stored JSON list of strings; anything else is no one.
pub(crate) fn strings_of(json: &str) -> Vec<String> {
    serde_json::from_str(json).unwrap_or_default()
}

/// A connection inside a transaction, as the statements take it.
pub(crate) type Conn = sqlx::AnyConnection;

/// A transaction that writes: on SQLite, on the connection of this process's turn to write
/// the database ([`Store::turn`]), holding the turn until it ends; elsewhere (and on SQLite
/// past [`TURN_WAIT`]), on a connection of the pool.
pub(crate) enum Tx {
    Pool(Transaction<'static, Any>),
    Turn(TurnTx),
}

/// A transaction on the turn's connection, begun and ended by statements of its own (the
/// connection is no pool's, so sqlx's transactions are not had for it).
pub(crate) struct TurnTx {
    turn: Turn,
    /// Until committed or rolled back: a transaction dropped open closes its connection,
    /// which rolls it back, and the next turn opens another.
    open: bool,
}

impl TurnTx {
    async fn end(mut self, statement: &'static str) -> Result<(), sqlx::Error> {
        let ended = sqlx::query(statement).execute(&mut *self).await;
        // One that failed may have left the transaction open; dropped open, it is closed.
        self.open = ended.is_err();
        ended.map(drop)
    }
}

impl Drop for TurnTx {
    fn drop(&mut self) {
        if self.open {
            self.turn.conn = None;
        }
    }
}

impl std::ops::Deref for TurnTx {
    type Target = sqlx::AnyConnection;

    fn deref(&self) -> &Self::Target {
        // Only begun on a connection the turn holds, which only a drop takes away.
        self.turn
            .conn
            .as_ref()
            .expect("a turn's transaction runs on its connection")
    }
}

impl std::ops::DerefMut for TurnTx {
    fn deref_mut(&mut self) -> &mut Self::Target {
        self.turn
            .conn
            .as_mut()
            .expect("a turn's transaction runs on its connection")
    }
}

impl Tx {
    pub(crate) async fn commit(self) -> Result<(), sqlx::Error> {
        match self {
            Tx::Pool(tx) => tx.commit().await,
            Tx::Turn(tx) => tx.end("COMMIT").await,
        }
    }

    pub(crate) async fn rollback(self) -> Result<(), sqlx::Error> {
        match self {
            Tx::Pool(tx) => tx.rollback().await,
            Tx::Turn(tx) => tx.end("ROLLBACK").await,
        }
    }
}

impl std::ops::Deref for Tx {
    type Target = sqlx::AnyConnection;

    fn deref(&self) -> &Self::Target {
        match self {
            Tx::Pool(tx) => tx,
            Tx::Turn(tx) => tx,
        }
    }
}

impl std::ops::DerefMut for Tx {
    fn deref_mut(&mut self) -> &mut Self::Target {
        match self {
            Tx::Pool(tx) => tx,
            Tx::Turn(tx) => tx,
        }
    }
}

/// SQLite's writer of this process on one database: whose turn it is to write, and the
/// connection every turn writes on. One connection for every writer keeps its page cache:
/// SQLite empties a connection's cache whenever another connection wrote since its last
/// transaction, so writes spread over a pool's connections read their pages again each
/// time. Being no pool's, it is not pinged each time it comes back either.
#[derive(Default)]
pub(crate) struct Writer {
    conn: Option<sqlx::AnyConnection>,
    /// The `synchronous` setting the connection has: handles of one database may ask for
    /// different ones, and each turn writes with its own handle's.
    sync: Option<SqliteSync>,
}

/// A turn to write, held until dropped.
pub(crate) type Turn = tokio::sync::OwnedMutexGuard<Writer>;

/// A connection to write outside a transaction (a statement that commits alone): the
/// turn's on SQLite, else one of the pool's.
pub(crate) enum Single {
    Pool(sqlx::pool::PoolConnection<Any>),
    Turn(Turn),
}

impl std::ops::Deref for Single {
    type Target = sqlx::AnyConnection;

    fn deref(&self) -> &Self::Target {
        match self {
            Single::Pool(conn) => conn,
            // Handed out only once the turn holds its connection.
            Single::Turn(turn) => turn
                .conn
                .as_ref()
                .expect("a turn handed out holds its connection"),
        }
    }
}

impl std::ops::DerefMut for Single {
    fn deref_mut(&mut self) -> &mut Self::Target {
        match self {
            Single::Pool(conn) => conn,
            Single::Turn(turn) => turn
                .conn
                .as_mut()
                .expect("a turn handed out holds its connection"),
        }
    }
}

impl Single {
    /// Hands back what statements sent together, beginning and committing their own
    /// transaction, came to, letting the connection go when they failed: one that failed
    /// part-way may have left the transaction open, and closing the connection rolls it
    /// back. The next turn opens another; the pool, another when it needs one.
    pub(crate) fn settle<T>(self, sent: Result<T, InboxError>) -> Result<T, InboxError> {
        if sent.is_err() {
            match self {
                Single::Pool(conn) => drop(conn.detach()),
                Single::Turn(mut turn) => turn.conn = None,
            }
        }
        sent
    }
}

/// The statement setting SQLite's `synchronous` to `sync`.
fn sync_pragma(sync: SqliteSync) -> &'static str {
    match sync {
        SqliteSync::Normal => "PRAGMA synchronous = NORMAL",
        SqliteSync::Full => "PRAGMA synchronous = FULL",
    }
}

/// Runs `statement` on the turn's connection; one that broke doing it is let go, and the
/// next turn opens another.
async fn on_turn(turn: &mut Writer, statement: &'static str) -> Result<(), InboxError> {
    // The turn opens one before it is handed out.
    let Some(conn) = turn.conn.as_mut() else {
        return Err(InboxError::Database(sqlx::Error::PoolClosed));
    };
    if let Err(e) = sqlx::query(statement).execute(conn).await {
        if broken(&e) {
            turn.conn = None;
        }
        return Err(e.into());
    }
    Ok(())
}

/// Whether an error leaves a connection unfit for more: the database's own refusals
/// (busy, a constraint) do not.
fn broken(e: &sqlx::Error) -> bool {
    !matches!(e, sqlx::Error::Database(_))
}

/// An inbox database: its pool, and the dialect its engine speaks.
pub(crate) struct Store {
    pub(crate) pool: AnyPool,
    pub(crate) dialect: &'static Dialect,
    /// Kept for the LISTEN connection; never shown (it may hold a password).
    url: String,
    /// The database as the pool opened it: the same for every handle on it in this
    /// process (a memory database's own name for each).
    key: String,
    /// SQLite's: whose turn it is to write, and the connection turns write on, shared by
    /// every handle of this process on the database ([`turn`](Self::turn)).
    turns: Option<Arc<tokio::sync::Mutex<Writer>>>,
    /// The `synchronous` setting this handle writes SQLite with.
    sqlite_sync: SqliteSync,
}

/// Whose turn it is to write each SQLite database, in this process, and on what.
static TURNS: shared::PerDatabase<tokio::sync::Mutex<Writer>> = shared::PerDatabase::new();

/// How long a writer waits for its turn, as long as SQLite's own wait for the lock
/// (`busy_timeout`); past it, it goes on to that wait on a connection of the pool, so a
/// turn never held forever stops no one for good.
const TURN_WAIT: Duration = Duration::from_secs(30);

impl Store {
    /// Connects to `url` and brings its schema up to date.
    pub(crate) async fn open(url: &str, settings: &PoolSettings) -> Result<Store, InboxError> {
        let (engine, pool, key) = open_pool(url, settings).await?;
        let turns = (engine == Engine::Sqlite).then(|| TURNS.get(&key, ""));
        Ok(Store {
            pool,
            dialect: Dialect::of(engine),
            url: url.to_owned(),
            key,
            turns,
            sqlite_sync: settings.sqlite_sync,
        })
    }

    /// Begins a transaction that writes. SQLite's default (deferred) transaction takes the
    /// write lock only at its first write and fails, instead of waiting, when another writer
    /// committed since its first read; the dialect's `BEGIN` waits for the lock up front.
    ///
    /// On SQLite the writers of this process take turns before they begin, and write on
    /// the turn's connection ([`turn`](Self::turn)).
    pub(crate) async fn write(&self) -> Result<Tx, InboxError> {
        if let Some(mut turn) = self.turn().await? {
            on_turn(&mut turn, self.dialect.begin_write).await?;
            return Ok(Tx::Turn(TurnTx { turn, open: true }));
        }
        let tx = self.pool.begin_with(self.dialect.begin_write).await?;
        Ok(Tx::Pool(tx))
    }

    /// A connection for a write that commits alone: on SQLite the turn's, held until it
    /// drops ([`turn`](Self::turn)); else the pool's.
    pub(crate) async fn single(&self) -> Result<Single, InboxError> {
        match self.turn().await? {
            Some(turn) => Ok(Single::Turn(turn)),
            None => Ok(Single::Pool(self.pool.acquire().await?)),
        }
    }

    /// This process's turn to write the database, on SQLite, with the connection it writes
    /// on (opened for the first turn, or after one broke) set to this handle's
    /// `synchronous`. SQLite lets one writer in at a time and makes the others retry,
    /// sleeping between tries (a millisecond, then two, five, ten…): writers of one process
    /// handed the turn in order go on the moment the one before commits instead. Other
    /// processes still meet at SQLite's lock. `None` on PostgreSQL, whose writers lock
    /// rows, not the database, and past [`TURN_WAIT`].
    async fn turn(&self) -> Result<Option<Turn>, InboxError> {
        let Some(turns) = self.turns.clone() else {
            return Ok(None);
        };
        let Ok(mut turn) = tokio::time::timeout(TURN_WAIT, turns.lock_owned()).await else {
            return Ok(None);
        };
        if turn.conn.is_none() {
            // Out of the pool for good: the pool opens another in its place when it needs
            // one, and this one closes with the last handle on the database.
            turn.conn = Some(self.pool.acquire().await?.detach());
            turn.sync = Some(self.sqlite_sync);
        }
        if turn.sync != Some(self.sqlite_sync) {
            on_turn(&mut turn, sync_pragma(self.sqlite_sync)).await?;
            turn.sync = Some(self.sqlite_sync);
        }
        Ok(Some(turn))
    }

    /// Which database this is, the same for every handle on it in this process; never
    /// shown (it may hold a password).
    pub(crate) fn key(&self) -> &str {
        &self.key
    }

    /// The engine, for `Debug`.
    pub(crate) fn engine(&self) -> Engine {
        self.dialect.engine
    }

    /// The most connections the pool opens.
    pub(crate) fn max_connections(&self) -> u32 {
        self.pool.options().get_max_connections()
    }

    /// Where a listener for the changes other processes announce connects, on an engine
    /// that announces them.
    pub(crate) fn listen_url(&self) -> Option<&str> {
        self.dialect.announces.then_some(self.url.as_str())
    }

    /// Whether answers are announced to other processes ([`listen`](Self::listen)); where
    /// they are not, idle workers poll.
    pub(crate) fn announces(&self) -> bool {
        self.dialect.announces
    }

    /// Wakes `answered` once for every answer that readies a run of `agent`, in any
    /// process, until the connection fails (the caller reconnects). Only a dialect that
    /// [`announces`](Self::announces) ever returns; others wait forever.
    pub(crate) async fn listen(&self, agent: &str, answered: &Notify) -> Result<(), InboxError> {
        if !self.dialect.announces {
            return std::future::pending().await;
        }
        #[cfg(feature = "postgres")]
        {
            let mut listener = sqlx::postgres::PgListener::connect(&self.url).await?;
            listener.listen(dialect::CHANNEL).await?;
            loop {
                let note = listener.recv().await?;
                if note.payload() == agent {
                    answered.notify_one();
                }
            }
        }
        // Only PostgreSQL's dialect announces, and a store of it opens only when it is built.
        #[cfg(not(feature = "postgres"))]
        {
            let _ = (agent, answered, &self.url);
            std::future::pending().await
        }
    }
}

/// A connection hearing the changes every process announces ([`audit::CHANGED`]).
pub(crate) struct Heard {
    #[cfg(feature = "postgres")]
    listener: sqlx::postgres::PgListener,
}

impl Heard {
    /// Waits for the next announced change.
    pub(crate) async fn next(&mut self) -> Result<(), InboxError> {
        #[cfg(feature = "postgres")]
        {
            self.listener.recv().await?;
            Ok(())
        }
        #[cfg(not(feature = "postgres"))]
        std::future::pending().await
    }
}

/// Listens for the changes announced on the PostgreSQL database at `url`.
pub(crate) async fn listen_changes(url: &str) -> Result<Heard, InboxError> {
    #[cfg(feature = "postgres")]
    {
        let mut listener = sqlx::postgres::PgListener::connect(url).await?;
        listener.listen(audit::CHANGED).await?;
        Ok(Heard { listener })
    }
    // Only PostgreSQL announces, and a store of it opens only when it is built.
    #[cfg(not(feature = "postgres"))]
    {
        let _ = url;
        Ok(Heard {})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The audit entries on the database, as the pool reads them.
    async fn entries(store: &Store) -> i64 {
        sqlx::query_scalar("SELECT COUNT(*) FROM toolnexus_inbox_audit")
            .fetch_one(&store.pool)
            .await
            .unwrap()
    }

    async fn append(tx: &mut Tx, seq: i64) {
        sqlx::query(
            "INSERT INTO toolnexus_inbox_audit (run_id, seq, at, kind) VALUES ('r', $1, 0, 'x')",
        )
        .bind(seq)
        .execute(&mut **tx)
        .await
        .unwrap();
    }

    /// The `synchronous` setting a transaction writes with.
    async fn synchronous(tx: &mut Tx) -> i64 {
        sqlx::query_scalar("PRAGMA synchronous")
            .fetch_one(&mut **tx)
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn a_write_dropped_unfinished_leaves_nothing_and_the_next_goes_on() {
        let settings = PoolSettings {
            max_connections: Some(2),
            sqlite_sync: SqliteSync::Normal,
            connect_timeout: Duration::from_secs(5),
        };
        let store = Store::open("sqlite::memory:", &settings).await.unwrap();
        let mut tx = store.write().await.unwrap();
        append(&mut tx, 1).await;
        drop(tx);
        // The turn's connection went with the transaction, rolling it back; the next turn
        // writes on a new one.
        let mut tx = store.write().await.unwrap();
        append(&mut tx, 2).await;
        tx.commit().await.unwrap();
        assert_eq!(entries(&store).await, 1);
        let mut tx = store.write().await.unwrap();
        append(&mut tx, 3).await;
        tx.rollback().await.unwrap();
        let mut tx = store.write().await.unwrap();
        append(&mut tx, 4).await;
        tx.commit().await.unwrap();
        let seqs: Vec<i64> =
            sqlx::query_scalar("SELECT seq FROM toolnexus_inbox_audit ORDER BY seq")
                .fetch_all(&store.pool)
                .await
                .unwrap();
        assert_eq!(seqs, [2, 4]);
    }

    #[tokio::test]
    async fn handles_on_one_file_share_the_turn_each_with_its_own_synchronous() {
        let dir = std::env::temp_dir().join(format!("toolnexus-turn-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let url = format!("sqlite://{}", dir.join("turn.db").display());
        let settings = |sqlite_sync| PoolSettings {
            max_connections: Some(2),
            sqlite_sync,
            connect_timeout: Duration::from_secs(5),
        };
        let normal = Store::open(&url, &settings(SqliteSync::Normal))
            .await
            .unwrap();
        let full = Store::open(&url, &settings(SqliteSync::Full))
            .await
            .unwrap();
        // 1 is NORMAL, 2 is FULL.
        let mut tx = normal.write().await.unwrap();
        assert_eq!(synchronous(&mut tx).await, 1);
        append(&mut tx, 1).await;
        tx.commit().await.unwrap();
        let mut tx = full.write().await.unwrap();
        assert_eq!(synchronous(&mut tx).await, 2);
        append(&mut tx, 2).await;
        tx.commit().await.unwrap();
        let mut tx = normal.write().await.unwrap();
        assert_eq!(synchronous(&mut tx).await, 1);
        tx.commit().await.unwrap();
        assert_eq!(entries(&normal).await, 2);
        drop((normal, full));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn urls_resolve_to_their_engine() {
        let (e, u, m) = name("sqlite://inbox.db").unwrap();
        assert_eq!(
            (e, u.as_str(), m),
            (Engine::Sqlite, "sqlite://inbox.db?mode=rwc", false)
        );
        let (e, _, m) = name("sqlite::memory:").unwrap();
        assert_eq!((e, m), (Engine::Sqlite, true));
        let (e, u, _) = name("postgres://u@h/db").unwrap();
        assert_eq!((e, u.as_str()), (Engine::Postgres, "postgres://u@h/db"));
        assert!(matches!(
            name("mysql://root:hunter2@h/db"),
            Err(InboxError::UnsupportedUrl(u)) if !u.contains("hunter2")
        ));
    }

    #[test]
    fn an_engine_left_out_of_the_build_is_named_with_its_feature() {
        let sqlite_only = |e: Engine| e == Engine::Sqlite;
        let e = resolve_in("postgres://u@h/db", sqlite_only).unwrap_err();
        assert!(matches!(
            e,
            InboxError::EngineNotBuilt { engine: "postgres" }
        ));
        assert!(
            e.to_string().contains("enable its `postgres` feature"),
            "{e}"
        );
        assert!(resolve_in("sqlite::memory:", sqlite_only).is_ok());
        let postgres_only = |e: Engine| e == Engine::Postgres;
        let e = resolve_in("sqlite::memory:", postgres_only).unwrap_err();
        assert!(matches!(e, InboxError::EngineNotBuilt { engine: "sqlite" }));
        assert!(e.to_string().contains("enable its `sqlite` feature"), "{e}");
    }

    #[test]
    fn this_build_has_the_engines_its_features_name() {
        assert_eq!(Engine::Sqlite.built(), cfg!(feature = "sqlite"));
        assert_eq!(Engine::Postgres.built(), cfg!(feature = "postgres"));
        assert_eq!(
            resolve("postgres://u@h/db").is_ok(),
            cfg!(feature = "postgres")
        );
    }
}
