//! Databases for the suites that keep runs in an inbox: a fresh SQLite file, or a fresh
//! database on the PostgreSQL cluster `TOOLNEXUS_TEST_PG_URL` names (scripts/test.sh
//! starts one), so that no two tests share rows.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use sqlx::Connection;

/// A database for one test; a SQLite file is removed when it is dropped.
pub struct TestDb {
    /// The URL an inbox opens.
    pub url: String,
    file: Option<PathBuf>,
}

impl TestDb {
    /// A fresh SQLite file in the temp dir.
    pub fn sqlite() -> TestDb {
        let file = std::env::temp_dir().join(format!("{}.db", unique("toolnexus_test")));
        TestDb {
            url: format!("sqlite://{}", file.display()),
            file: Some(file),
        }
    }

    /// A fresh database on the test cluster.
    pub async fn postgres() -> TestDb {
        TestDb {
            url: create_database(&unique("toolnexus_test")).await,
            file: None,
        }
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        if let Some(file) = &self.file {
            for suffix in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
            }
        }
    }
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

/// A name no other test of any run uses: the prefix, the process, a counter and the time.
pub fn unique(prefix: &str) -> String {
    static SEQ: AtomicUsize = AtomicUsize::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!(
        "{prefix}_{}_{}_{nanos}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    )
}
