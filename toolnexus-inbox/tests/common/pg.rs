//! The test cluster's PostgreSQL (`TOOLNEXUS_TEST_PG_URL`, started by scripts/test.sh):
//! its address, and a fresh database on it for one test. Shared by the store's and the
//! page's tests.
#![allow(dead_code, unused_imports)] // each test crate uses part of it

use sqlx::Connection;

pub use toolnexus_test_support::databases::{create_database, pg_admin_url};

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
