//! A database of its own for each test: a fresh SQLite file, or a fresh database on the
//! PostgreSQL cluster `TOOLNEXUS_TEST_PG_URL` names (scripts/test.sh starts one).

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A database for one test, removed (the SQLite file) when dropped.
pub struct TestDb {
    /// The URL an inbox opens.
    pub url: String,
    file: Option<PathBuf>,
}

static SEQ: AtomicUsize = AtomicUsize::new(0);

/// What the files and databases of the suites are named after.
const PREFIX: &str = "toolnexus_test";

/// A name no other test of any process uses.
fn unique(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!(
        "{prefix}_{}_{}_{nanos}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    )
}

impl TestDb {
    /// A fresh SQLite file in the temp directory.
    pub fn sqlite() -> TestDb {
        let file = std::env::temp_dir().join(format!("{}.db", unique(PREFIX)));
        TestDb {
            url: format!("sqlite://{}", file.display()),
            file: Some(file),
        }
    }

    /// A database of its own on the cluster `TOOLNEXUS_TEST_PG_URL` names.
    pub async fn postgres() -> TestDb {
        use sqlx::Connection;
        let admin = std::env::var("TOOLNEXUS_TEST_PG_URL").unwrap_or_else(|_| {
            panic!(
                "TOOLNEXUS_TEST_PG_URL is not set: run the tests with scripts/test.sh \
                 (it starts PostgreSQL), or point it at a cluster you may create databases on"
            )
        });
        let name = unique(PREFIX);
        let mut conn = sqlx::postgres::PgConnection::connect(&admin)
            .await
            .unwrap_or_else(|e| panic!("cannot reach TOOLNEXUS_TEST_PG_URL: {e}"));
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
            .execute(&mut conn)
            .await
            .expect("the test cluster creates a database");
        let (head, query) = match admin.split_once('?') {
            Some((h, q)) => (h.to_owned(), format!("?{q}")),
            None => (admin.clone(), String::new()),
        };
        let server = match head.rfind('/') {
            Some(slash) if slash > head.find("://").map_or(0, |s| s + 2) => &head[..slash],
            _ => head.as_str(),
        };
        TestDb {
            url: format!("{server}/{name}{query}"),
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
