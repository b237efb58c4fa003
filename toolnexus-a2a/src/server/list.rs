//! `ListTasks`: the tasks a caller may see, the most recently changed first, a page at a
//! time. The inbox's door records are read through a query that keeps only those the
//! caller started or may answer (and a context's, when asked), newest first, a page at a
//! time, so a page reads its own records and not every task; each is then shown as
//! `GetTask` would show it to them.

use std::sync::Arc;

use a2a::{A2AError, ListTasksRequest, ListTasksResponse, Task, TaskState};
use chrono::{DateTime, Utc};
use serde_json::Value;
use toolnexus_inbox::{Door, Listed, Person, RecordCursor, RecordQuery};

use super::errors::to_protocol;
use super::record::TaskRecord;
use super::shared::{Seen, Shared};
use super::view;

/// The tasks a page holds unless the client asks for another number, as A2A says.
pub(crate) const DEFAULT_PAGE_SIZE: i32 = 50;

/// The most tasks a page holds, as A2A says.
pub(crate) const MAX_PAGE_SIZE: i32 = 100;

/// How many records are read at once while a filter only the task's view can tell (its
/// state, its status time) passes some by.
const BATCH: usize = 100;

/// A `ListTasks` request, checked.
struct Asked {
    page_size: usize,
    after: Option<RecordCursor>,
    status: Option<TaskState>,
    since: Option<DateTime<Utc>>,
    history_length: Option<i32>,
    include_artifacts: bool,
}

impl Asked {
    /// `request` checked: a page size out of 1..=100, a negative history length or a page
    /// token this server did not give are invalid params, each saying what to send.
    fn of(request: &ListTasksRequest) -> Result<Asked, A2AError> {
        let page_size = request.page_size.unwrap_or(DEFAULT_PAGE_SIZE);
        if !(1..=MAX_PAGE_SIZE).contains(&page_size) {
            return Err(A2AError::invalid_params(format!(
                "pageSize must be between 1 and {MAX_PAGE_SIZE}, not {page_size}"
            )));
        }
        if let Some(n) = request.history_length.filter(|n| *n < 0) {
            return Err(A2AError::invalid_params(format!(
                "historyLength must be 0 or more, not {n}"
            )));
        }
        let after = match request.page_token.as_deref() {
            None | Some("") => None,
            Some(token) => Some(RecordCursor::from_token(token).ok_or_else(|| {
                A2AError::invalid_params(
                    "pageToken is not one this server gave: send the nextPageToken of the \
                     page before, or none for the first page",
                )
            })?),
        };
        Ok(Asked {
            page_size: usize::try_from(page_size).unwrap_or(1),
            after,
            status: request
                .status
                .clone()
                .filter(|s| *s != TaskState::Unspecified),
            since: request.status_timestamp_after,
            history_length: request.history_length,
            include_artifacts: request.include_artifacts.unwrap_or(false),
        })
    }

    /// Whether a filter only the task's view can tell passes some records by.
    fn filters_views(&self) -> bool {
        self.status.is_some() || self.since.is_some()
    }

    /// Whether the task `seen` is one the request asks for.
    fn takes(&self, seen: &Seen) -> bool {
        self.status.as_ref().is_none_or(|s| seen.view.state() == *s)
            && self.since.is_none_or(|since| seen.view.at >= since)
    }
}

/// `ListTasks`: the tasks `who` started (on a server without an identify hook, the tasks
/// kept before starters were too, which are theirs as every caller's) and those waiting on
/// a request they may answer, shown as `GetTask` shows them (the latter as their question
/// only), without artifacts unless asked.
pub(crate) async fn list(
    shared: &Arc<Shared>,
    request: ListTasksRequest,
    who: &Person,
) -> Result<Value, A2AError> {
    let asked = Asked::of(&request)?;
    // Whom a task shows to is one rule (`Shared::sight`): its starter, and while it waits
    // whoever may answer it. The query takes the records either could be, by their
    // starter or their first run; each is then held to the rule itself.
    let answerable = shared
        .inbox
        .answerable_chains(who)
        .await
        .map_err(|e| to_protocol(e.into()))?;
    let mut query = RecordQuery::new(Door::A2A)
        .started_by(who)
        .or_field_in("run", answerable);
    if shared.unowned.as_ref().is_some_and(|s| s.is(who)) {
        query = query.or_unstarted();
    }
    if let Some(context) = request.context_id.as_deref().filter(|c| !c.is_empty()) {
        query = query.field("contextId", context);
    }
    let mut walk = Walk {
        shared,
        query: &query,
        asked: &asked,
        who,
        after: asked.after.clone(),
        done: false,
    };
    let mut page = Vec::new();
    let mut next = String::new();
    'pages: while !walk.done {
        for (cursor, id, seen) in walk.batch().await? {
            if page.len() == asked.page_size {
                // One more follows: the next page starts after the last one shown.
                next = token_after(&page);
                break 'pages;
            }
            page.push((cursor, shown(shared, &id, &seen, &asked, who)));
        }
    }
    let total = if asked.filters_views() {
        walk.after = None;
        walk.done = false;
        let mut total = 0usize;
        while !walk.done {
            total += walk.batch().await?.len();
        }
        total
    } else {
        let n = shared
            .inbox
            .count_records(&query)
            .await
            .map_err(|e| to_protocol(e.into()))?;
        usize::try_from(n).unwrap_or(usize::MAX)
    };
    let response = ListTasksResponse {
        tasks: page.into_iter().map(|(_, task)| task).collect(),
        next_page_token: next,
        page_size: i32::try_from(asked.page_size).unwrap_or(MAX_PAGE_SIZE),
        total_size: i32::try_from(total).unwrap_or(i32::MAX),
    };
    serde_json::to_value(response).map_err(|e| A2AError::internal(e.to_string()))
}

/// The token of the page after `page`: just after its last task.
fn token_after(page: &[(RecordCursor, Task)]) -> String {
    page.last()
        .map(|(cursor, _)| cursor.token())
        .unwrap_or_default()
}

/// Task `id` as `who` sees it, its history and artifacts as `asked`.
fn shown(shared: &Shared, id: &str, seen: &Seen, asked: &Asked, who: &Person) -> Task {
    let mut task = shared.shown(id, seen, asked.history_length, who);
    if !asked.include_artifacts {
        task.artifacts = None;
    } else if task.artifacts.is_none() {
        // Asked for, they are there, if only as none.
        task.artifacts = Some(Vec::new());
    }
    task
}

/// The caller's records read a batch at a time from a cursor, each read as the task it is
/// and kept when the request takes it and the caller may see it.
struct Walk<'a> {
    shared: &'a Shared,
    query: &'a RecordQuery,
    asked: &'a Asked,
    who: &'a Person,
    after: Option<RecordCursor>,
    done: bool,
}

impl Walk<'_> {
    /// The tasks of the next batch of records the request takes, each with the cursor
    /// just after it; `done` once the records run out.
    async fn batch(&mut self) -> Result<Vec<(RecordCursor, String, Seen)>, A2AError> {
        // Without a filter of views every record read is a task of the page: one more
        // than the page tells whether another follows.
        let limit = if self.asked.filters_views() {
            BATCH
        } else {
            self.asked.page_size + 1
        };
        let listed: Vec<Listed<TaskRecord>> = self
            .shared
            .inbox
            .records(self.query, self.after.as_ref(), limit)
            .await
            .map_err(|e| to_protocol(e.into()))?;
        self.done = listed.len() < limit;
        let mut taken = Vec::new();
        for entry in listed {
            let cursor = entry.cursor().clone();
            self.after = Some(cursor.clone());
            let kept = match entry.record {
                Ok(kept) => kept,
                Err(error) => {
                    // One unreadable record does not hide the caller's others.
                    tracing::warn!(%error, task = %entry.id, "a task's record is not listed");
                    continue;
                }
            };
            let live = self.shared.is_live(&entry.id);
            let view = view::read(&self.shared.inbox, live, &kept)
                .await
                .map_err(to_protocol)?;
            let Some(sight) = self.shared.sight(&kept, &view, self.who) else {
                continue;
            };
            let seen = Seen { kept, view, sight };
            if self.asked.takes(&seen) {
                taken.push((cursor, entry.id, seen));
            }
        }
        Ok(taken)
    }
}

#[cfg(test)]
mod tests {
    use a2a::{error_code, ListTasksRequest, TaskState};

    use super::{Asked, DEFAULT_PAGE_SIZE};

    fn request(fields: serde_json::Value) -> ListTasksRequest {
        serde_json::from_value(fields).expect("a ListTasks request")
    }

    #[test]
    fn a_request_without_fields_asks_for_the_default_page() {
        let asked = Asked::of(&request(serde_json::json!({}))).expect("valid");
        assert_eq!(asked.page_size, DEFAULT_PAGE_SIZE as usize);
        assert!(asked.after.is_none() && !asked.include_artifacts);
        assert!(!asked.filters_views());
        let unspecified = serde_json::json!({"status": "TASK_STATE_UNSPECIFIED", "pageToken": ""});
        let asked = Asked::of(&request(unspecified)).expect("valid");
        assert!(
            !asked.filters_views(),
            "an unspecified state filters nothing"
        );
        let working = serde_json::json!({"status": "TASK_STATE_WORKING"});
        let asked = Asked::of(&request(working)).expect("valid");
        assert_eq!(asked.status, Some(TaskState::Working));
    }

    #[test]
    fn sizes_lengths_and_tokens_out_of_bounds_are_invalid_params() {
        for fields in [
            serde_json::json!({"pageSize": 0}),
            serde_json::json!({"pageSize": 101}),
            serde_json::json!({"historyLength": -1}),
            serde_json::json!({"pageToken": "forged"}),
        ] {
            let refused = Asked::of(&request(fields.clone())).err().map(|e| e.code);
            assert_eq!(refused, Some(error_code::INVALID_PARAMS), "{fields}");
        }
        assert!(Asked::of(&request(serde_json::json!({"pageSize": 100}))).is_ok());
    }
}
