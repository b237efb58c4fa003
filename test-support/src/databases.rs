//! Databases for the suites that keep runs in an inbox: a fresh SQLite file, or a fresh
//! database on the PostgreSQL cluster `TOOLNEXUS_TEST_PG_URL` names (scripts/test.sh
//! starts one), so that no two tests share rows; and [`both_engines!`](crate::both_engines),
//! which runs one test body on each.

pub use crate::names::unique;
use std::future::Future;
use std::path::PathBuf;

use sqlx::Connection;

use crate::clock::TestClock;

/// A database for one test; a SQLite file is removed when it is dropped.
pub struct TestDb {
    /// The URL an inbox opens.
    pub url: String,
    /// The time of this test's inboxes, for a suite that installs it on the ones it opens
    /// (`InboxBuilder::clock(db.clock.reader())`): a lease or a deadline then lapses when
    /// the test moves it on, not after a wait.
    pub clock: TestClock,
    file: Option<PathBuf>,
}

impl TestDb {
    /// A fresh SQLite file in the temp dir.
    pub fn sqlite() -> TestDb {
        let file = std::env::temp_dir().join(format!("{}.db", unique("toolnexus_test")));
        TestDb {
            url: format!("sqlite://{}", file.display()),
            clock: TestClock::default(),
            file: Some(file),
        }
    }

    /// A fresh database on the test cluster.
    pub async fn postgres() -> TestDb {
        TestDb {
            url: create_database(&unique("toolnexus_test")).await,
            clock: TestClock::default(),
            file: None,
        }
    }

    /// A fresh database of `engine`.
    pub async fn of(engine: Engine) -> TestDb {
        match engine {
            Engine::Sqlite => TestDb::sqlite(),
            Engine::Postgres => TestDb::postgres().await,
        }
    }

    /// A connection of its own to the database, which it creates if missing (SQLite), as
    /// an operator's tool (or an older version of a crate) would open it.
    pub async fn connect(&self) -> sqlx::AnyConnection {
        sqlx::any::install_default_drivers();
        let url = match self.file {
            Some(_) => format!("{}?mode=rwc", self.url),
            None => self.url.clone(),
        };
        sqlx::AnyConnection::connect(&url)
            .await
            .expect("the test database is reachable")
    }

    /// Runs a statement straight on the database, as an operator (or a fault) would.
    pub async fn raw(&self, sql: &str) {
        self.try_raw(sql).await.expect("the statement runs");
    }

    /// `sql` run as it is, with what the database said of it.
    pub async fn try_raw(&self, sql: &str) -> Result<(), sqlx::Error> {
        let mut conn = self.connect().await;
        sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_owned()))
            .execute(&mut conn)
            .await
            .map(drop)
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        if let Some(file) = &self.file {
            for suffix in ["", "-wal", "-shm"] {
                let mut path = file.clone().into_os_string();
                path.push(suffix);
                let _ = std::fs::remove_file(path);
            }
        }
    }
}

/// The two engines an inbox keeps runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// A SQLite file.
    Sqlite,
    /// A database on the test cluster.
    Postgres,
}

/// Runs the async test body `test` on a fresh database of `engine`, on a runtime of four
/// worker threads (so racing tasks really run at once): what each test
/// [`both_engines!`](crate::both_engines) writes does.
pub fn run_on<F, Fut>(engine: Engine, test: F)
where
    F: FnOnce(TestDb) -> Fut,
    Fut: Future<Output = ()>,
{
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .expect("the test's runtime starts")
        .block_on(async move { test(TestDb::of(engine).await).await })
}

/// Runs each named async test body on SQLite and on PostgreSQL: each name (an
/// `async fn NAME(db: TestDb)` in scope) becomes a module `NAME` holding a `sqlite` and a
/// `postgres` test, each on a fresh database of its own and a runtime of four worker
/// threads, so `cargo test NAME` runs both and `cargo test sqlite` one engine of all.
///
/// A suite writing the pair by hand (an `#[tokio::test]` for each engine calling one
/// body) says the same in one line:
///
/// ```
/// use toolnexus_test_support::databases::TestDb;
///
/// toolnexus_test_support::both_engines!(a_task_outlives_its_server, two_answers_race);
///
/// async fn a_task_outlives_its_server(db: TestDb) {
///     assert!(!db.url.is_empty());
/// }
///
/// async fn two_answers_race(db: TestDb) {
///     assert!(!db.url.is_empty());
/// }
/// # fn main() {}
/// ```
///
/// The PostgreSQL variants need `TOOLNEXUS_TEST_PG_URL` (scripts/test.sh sets it).
#[macro_export]
macro_rules! both_engines {
    ($($name:ident),* $(,)?) => {$(
        mod $name {
            #[test]
            fn sqlite() {
                $crate::databases::run_on($crate::databases::Engine::Sqlite, super::$name)
            }
            #[test]
            fn postgres() {
                $crate::databases::run_on($crate::databases::Engine::Postgres, super::$name)
            }
        }
    )*};
}

/// The cluster's admin URL; a clear failure when the suite was started without it.
pub fn pg_admin_url() -> String {
    std::env::var("TOOLNEXUS_TEST_PG_URL").unwrap_or_else(|_| {
        panic!(
            "TOOLNEXUS_TEST_PG_URL is not set: run the tests with scripts/test.sh \
             (it starts PostgreSQL), or point it at a cluster you may create databases on"
        )
    })
}

/// Creates database `name` on the test cluster and returns its URL.
pub async fn create_database(name: &str) -> String {
    let admin = pg_admin_url();
    let mut conn = sqlx::postgres::PgConnection::connect(&admin)
        .await
        .unwrap_or_else(|e| panic!("cannot reach TOOLNEXUS_TEST_PG_URL: {e}"));
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&mut conn)
        .await
        .expect("the test cluster creates a database");
    with_database(&admin, name)
}

/// `base` (a server URL with some database) pointed at database `name`.
pub fn with_database(base: &str, name: &str) -> String {
    let (head, query) = match base.split_once('?') {
        Some((h, q)) => (h, Some(q)),
        None => (base, None),
    };
    let server = match head.rfind('/') {
        Some(slash) if slash > head.find("://").map_or(0, |s| s + 2) => &head[..slash],
        _ => head,
    };
    match query {
        Some(q) => format!("{server}/{name}?{q}"),
        None => format!("{server}/{name}"),
    }
}
