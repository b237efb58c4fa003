//! The test cluster's PostgreSQL (`TOOLNEXUS_TEST_PG_URL`, started by scripts/test.sh):
//! its address, and a fresh database on it for one test. Shared by the store's and the
//! page's tests.
#![allow(dead_code)] // each test crate uses part of it

use sqlx::Connection;

/// The cluster's admin URL; a clear failure when the suite was started without it.
pub fn pg_admin_url() -> String {
    std::env::var("TOOLNEXUS_TEST_PG_URL").unwrap_or_else(|_| {
        panic!(
            "TOOLNEXUS_TEST_PG_URL is not set: run the tests with scripts/test.sh \
             (it starts PostgreSQL)"
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

/// Drops database `name` while its clients are connected (they are disconnected), as an
/// operator's mistake or a failover would take it away.
pub async fn drop_database(name: &str) {
    let mut conn = sqlx::postgres::PgConnection::connect(&pg_admin_url())
        .await
        .unwrap_or_else(|e| panic!("cannot reach TOOLNEXUS_TEST_PG_URL: {e}"));
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "DROP DATABASE {name} WITH (FORCE)"
    )))
    .execute(&mut conn)
    .await
    .expect("the test cluster drops a database");
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
