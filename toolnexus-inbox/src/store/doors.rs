//! `toolnexus_inbox_doors`: what each door keeps about a run it serves, one JSON record per
//! door and door's id.

use std::sync::LazyLock;

use sqlx::{AnyPool, Row};

use super::Dialect;
use crate::error::InboxError;

const PUT: &str = "INSERT INTO toolnexus_inbox_doors (door, id, record, updated_at) \
     VALUES ($1, $2, $3, $4) ON CONFLICT (door, id) DO UPDATE SET record = excluded.record, \
     updated_at = excluded.updated_at";

// A door's record changes what it shows of a run as much as the run does: announced on the
// runs' channel ([`CHANGED`](super::audit::CHANGED)), in the same statement.
static PUT_ANNOUNCED: LazyLock<String> = LazyLock::new(|| {
    format!(
        "WITH kept AS ({PUT} RETURNING id) SELECT kept.id FROM kept, \
         LATERAL (SELECT pg_notify('{}', kept.id)) AS announced",
        super::audit::CHANGED
    )
});

/// Writes `record` for `door`'s `id`, replacing what was there; announced to every
/// process where the engine `announces`.
pub(crate) async fn put(
    pool: &AnyPool,
    announces: bool,
    door: &str,
    id: &str,
    record: &str,
    at: i64,
) -> Result<(), InboxError> {
    let statement = if announces {
        PUT_ANNOUNCED.as_str()
    } else {
        PUT
    };
    sqlx::query(statement)
        .bind(door)
        .bind(id)
        .bind(record)
        .bind(at)
        .execute(pool)
        .await?;
    Ok(())
}

/// Marks `door`'s `id` as changed at `at`; `false` when there is no such record.
pub(crate) async fn touch(
    pool: &AnyPool,
    door: &str,
    id: &str,
    at: i64,
) -> Result<bool, InboxError> {
    let done =
        sqlx::query("UPDATE toolnexus_inbox_doors SET updated_at = $3 WHERE door = $1 AND id = $2")
            .bind(door)
            .bind(id)
            .bind(at)
            .execute(pool)
            .await?;
    Ok(done.rows_affected() > 0)
}

/// The record of `door`'s `id` and when it last changed, if there is one.
/// Deletes `door`'s record of `id`; `false` when there was none.
pub(crate) async fn delete(pool: &AnyPool, door: &str, id: &str) -> Result<bool, InboxError> {
    let done = sqlx::query("DELETE FROM toolnexus_inbox_doors WHERE door = $1 AND id = $2")
        .bind(door)
        .bind(id)
        .execute(pool)
        .await?;
    Ok(done.rows_affected() > 0)
}

pub(crate) async fn get(
    pool: &AnyPool,
    door: &str,
    id: &str,
) -> Result<Option<(String, i64)>, InboxError> {
    let row = sqlx::query(
        "SELECT record, updated_at FROM toolnexus_inbox_doors WHERE door = $1 AND id = $2",
    )
    .bind(door)
    .bind(id)
    .fetch_optional(pool)
    .await?;
    row.map(|r| Ok((r.try_get("record")?, r.try_get("updated_at")?)))
        .transpose()
}

/// Which of a door's records a listing takes: the door's own, those one person started
/// (and, with `unstarted`, those kept without a starter, and with `any_of`, those whose
/// field is one of a list), and those whose top-level JSON fields hold the given strings. Every condition is the database's to check, so a listing
/// reads only the rows it returns.
pub(crate) struct Filter<'a> {
    pub(crate) door: &'a str,
    /// The starter's id, ASCII-lowercased as ids compare, and whether it is a stand-in.
    pub(crate) starter: Option<(String, bool)>,
    pub(crate) unstarted: bool,
    /// Records whose top-level field is one of these values are taken too.
    pub(crate) any_of: &'a [(String, Vec<String>)],
    pub(crate) fields: &'a [(String, String)],
}

/// Where a listing goes on from: the last row of the page before, in its order.
pub(crate) struct After<'a> {
    pub(crate) at: i64,
    pub(crate) id: &'a str,
}

/// One listed row: the door's id, the record and when it last changed.
pub(crate) struct Listed {
    pub(crate) id: String,
    pub(crate) record: String,
    pub(crate) at: i64,
}

/// The `WHERE` clause of `filter` and the values it binds, in order (`$1` first).
fn conditions(dialect: &Dialect, filter: &Filter<'_>) -> (String, Vec<String>) {
    let mut binds = vec![filter.door.to_owned()];
    let mut clause = "door = $1".to_owned();
    let json = |binds: &mut Vec<String>, keys: &[&str]| {
        binds.push(dialect.json_path(keys));
        dialect.json_text("record", binds.len())
    };
    let mut owners = Vec::new();
    if let Some((id, stand_in)) = &filter.starter {
        let starter_id = json(&mut binds, &["starter", "id"]);
        binds.push(id.clone());
        let id_param = binds.len();
        let flag = json(&mut binds, &["starter", "standIn"]);
        // SQLite reads JSON `true` as 1, PostgreSQL as 'true'.
        let flagged = format!("COALESCE(CAST({flag} AS TEXT), '') IN ('1', 'true')");
        let flagged = if *stand_in {
            flagged
        } else {
            format!("NOT {flagged}")
        };
        let starter_id = dialect.ascii_lower(&starter_id);
        owners.push(format!("({starter_id} = ${id_param} AND {flagged})"));
    }
    if filter.unstarted {
        let starter = json(&mut binds, &["starter"]);
        owners.push(format!("{starter} IS NULL"));
    }
    for (name, values) in filter.any_of {
        let field = json(&mut binds, &[name]);
        let mut params = Vec::new();
        for value in values {
            binds.push(value.clone());
            params.push(format!("${}", binds.len()));
        }
        if !params.is_empty() {
            owners.push(format!("{field} IN ({})", params.join(", ")));
        }
    }
    if filter.starter.is_some() || filter.unstarted || !filter.any_of.is_empty() {
        let owners = if owners.is_empty() {
            "FALSE".to_owned()
        } else {
            owners.join(" OR ")
        };
        clause.push_str(&format!(" AND ({owners})"));
    }
    for (name, value) in filter.fields {
        let field = json(&mut binds, &[name]);
        binds.push(value.clone());
        clause.push_str(&format!(" AND {field} = ${}", binds.len()));
    }
    (clause, binds)
}

/// Up to `limit` of the records `filter` takes, the most recently changed first (ties by
/// id, descending), after `after` when given.
pub(crate) async fn page(
    pool: &AnyPool,
    dialect: &Dialect,
    filter: &Filter<'_>,
    after: Option<&After<'_>>,
    limit: i64,
) -> Result<Vec<Listed>, InboxError> {
    let (mut clause, mut binds) = conditions(dialect, filter);
    let mut at = None;
    if let Some(after) = after {
        binds.push(after.id.to_owned());
        let id = binds.len();
        at = Some(after.at);
        // The time is bound last, after every text.
        let at_param = binds.len() + 1;
        clause.push_str(&format!(
            " AND (updated_at < ${at_param} OR (updated_at = ${at_param} AND id < ${id}))"
        ));
    }
    let limit_param = binds.len() + usize::from(at.is_some()) + 1;
    let sql = format!(
        "SELECT id, record, updated_at FROM toolnexus_inbox_doors WHERE {clause} \
         ORDER BY updated_at DESC, id DESC LIMIT ${limit_param}"
    );
    let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
    for bind in binds {
        query = query.bind(bind);
    }
    if let Some(at) = at {
        query = query.bind(at);
    }
    let rows = query.bind(limit).fetch_all(pool).await?;
    rows.into_iter()
        .map(|r| {
            Ok(Listed {
                id: r.try_get("id")?,
                record: r.try_get("record")?,
                at: r.try_get("updated_at")?,
            })
        })
        .collect()
}

/// How many records `filter` takes.
pub(crate) async fn count(
    pool: &AnyPool,
    dialect: &Dialect,
    filter: &Filter<'_>,
) -> Result<i64, InboxError> {
    let (clause, binds) = conditions(dialect, filter);
    let sql = format!("SELECT COUNT(*) AS n FROM toolnexus_inbox_doors WHERE {clause}");
    let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
    for bind in binds {
        query = query.bind(bind);
    }
    Ok(query.fetch_one(pool).await?.try_get("n")?)
}
