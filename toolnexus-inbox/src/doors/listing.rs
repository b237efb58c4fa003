//! Listing what a door keeps: one person's records of a door, the most recently changed
//! first, a page at a time. The database filters and limits, so a listing reads only the
//! rows of its page however many records there are, and the cursor that goes on from a
//! page travels as an opaque token a client hands back.

use std::time::Duration;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use serde::de::DeserializeOwned;

use crate::clock::from_ms;
use crate::doors::record::{Door, DoorRecord};
use crate::doors::starter::Starter;
use crate::error::InboxError;
use crate::inbox::Inbox;
use crate::policy::people::Person;
use crate::store::doors::{self, After, Filter};

/// Which of a door's records [`Inbox::records`] lists: those one person started (the
/// [`Starter`] a record keeps under its `starter` key), those kept before starters were,
/// and those whose top-level string field is one of a list — any of these — narrowed to
/// those whose top-level string fields hold given values.
///
/// ```
/// use toolnexus_inbox::{Door, Person, RecordQuery};
///
/// let ada = Person::new("ada@example.com");
/// let query = RecordQuery::new(Door::A2A).started_by(&ada).field("contextId", "c1");
/// # drop(query);
/// ```
#[derive(Debug, Clone)]
pub struct RecordQuery {
    door: Door,
    starter: Option<Starter>,
    unstarted: bool,
    any_of: Vec<(String, Vec<String>)>,
    fields: Vec<(String, String)>,
}

impl RecordQuery {
    /// Every record of `door`, until narrowed.
    pub fn new(door: Door) -> RecordQuery {
        RecordQuery {
            door,
            starter: None,
            unstarted: false,
            any_of: Vec::new(),
            fields: Vec::new(),
        }
    }

    /// Only the records `who` started, as [`Starter::is`] tells: the same person (ids
    /// compare ignoring ASCII case), a stand-in only for a stand-in.
    pub fn started_by(mut self, who: &Person) -> RecordQuery {
        self.starter = Some(Starter::of(who));
        self
    }

    /// The records kept without a starter too (kept before doors kept them), beside those
    /// of [`started_by`](Self::started_by): for a door where such records are the caller's.
    pub fn or_unstarted(mut self) -> RecordQuery {
        self.unstarted = true;
        self
    }

    /// The records whose top-level field `name` is one of `values` too, beside those of
    /// [`started_by`](Self::started_by): e.g. those whose first run is among the
    /// [chains someone may answer](Inbox::answerable_chains). `name` is the door's own key.
    pub fn or_field_in(
        mut self,
        name: &str,
        values: impl IntoIterator<Item = String>,
    ) -> RecordQuery {
        self.any_of
            .push((name.to_owned(), values.into_iter().collect()));
        self
    }

    /// Only the records whose top-level field `name` is the string `value`. `name` is the
    /// door's own key (e.g. `contextId`), never a caller's.
    pub fn field(mut self, name: &str, value: impl Into<String>) -> RecordQuery {
        self.fields.push((name.to_owned(), value.into()));
        self
    }

    fn filter(&self) -> Filter<'_> {
        Filter {
            door: self.door.name(),
            starter: self
                .starter
                .as_ref()
                .map(|s| (s.id.to_ascii_lowercase(), s.stand_in)),
            unstarted: self.unstarted,
            any_of: &self.any_of,
            fields: &self.fields,
        }
    }
}

/// Where a listing goes on from: just after a record it listed
/// ([`Listed::cursor`]). Its [`token`](Self::token) is opaque text for a client to hand
/// back; a token that does not read back is refused, never guessed at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordCursor {
    at: i64,
    id: String,
}

impl RecordCursor {
    /// The cursor as opaque text.
    pub fn token(&self) -> String {
        URL_SAFE_NO_PAD.encode(format!("{}:{}", self.at, self.id))
    }

    /// The cursor a [`token`](Self::token) spells; `None` when it spells none.
    ///
    /// ```
    /// use toolnexus_inbox::RecordCursor;
    ///
    /// assert!(RecordCursor::from_token("not a token").is_none());
    /// assert!(RecordCursor::from_token("").is_none());
    /// ```
    pub fn from_token(token: &str) -> Option<RecordCursor> {
        let bytes = URL_SAFE_NO_PAD.decode(token).ok()?;
        let text = String::from_utf8(bytes).ok()?;
        let (at, id) = text.split_once(':')?;
        if id.is_empty() {
            return None;
        }
        Some(RecordCursor {
            at: at.parse().ok()?,
            id: id.to_owned(),
        })
    }
}

/// One record a listing found ([`Inbox::records`]).
#[derive(Debug)]
#[non_exhaustive]
pub struct Listed<T> {
    /// The door's id of what it keeps (a task id, a thread id).
    pub id: String,
    /// The record; [`InboxError::CorruptRecord`] when it does not read back as a `T`, so
    /// one bad record leaves the rest of a listing readable.
    pub record: Result<DoorRecord<T>, InboxError>,
    cursor: RecordCursor,
}

impl<T> Listed<T> {
    /// Where a listing goes on from, just after this record.
    pub fn cursor(&self) -> &RecordCursor {
        &self.cursor
    }
}

impl Inbox {
    /// Up to `limit` of the records `query` takes, the most recently changed first (kept
    /// or [touched](Self::touch_record); ties in id order, descending), after `after`
    /// when given. The database filters and limits, so only these rows are read.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use serde_json::{json, Value};
    /// use toolnexus_inbox::{Door, Inbox, Person, RecordQuery, Starter};
    ///
    /// let inbox = Inbox::open("sqlite::memory:").await?;
    /// let ada = Person::new("ada@example.com");
    /// for id in ["t1", "t2", "t3"] {
    ///     inbox.keep_record(Door::A2A, id, &json!({"starter": Starter::of(&ada)})).await?;
    /// }
    /// inbox.keep_record(Door::A2A, "t4", &json!({"starter": {"id": "eve@example.com"}})).await?;
    /// let hers = RecordQuery::new(Door::A2A).started_by(&ada);
    /// let first = inbox.records::<Value>(&hers, None, 2).await?;
    /// assert_eq!(first.len(), 2);
    /// let rest = inbox.records::<Value>(&hers, Some(first[1].cursor()), 2).await?;
    /// assert_eq!(rest.len(), 1);
    /// assert_eq!(inbox.count_records(&hers).await?, 3);
    /// # Ok::<(), toolnexus_inbox::InboxError>(())
    /// # }).unwrap();
    /// ```
    pub async fn records<T: DeserializeOwned>(
        &self,
        query: &RecordQuery,
        after: Option<&RecordCursor>,
        limit: usize,
    ) -> Result<Vec<Listed<T>>, InboxError> {
        let store = &self.inner.store;
        let after = after.map(|c| After {
            at: c.at,
            id: &c.id,
        });
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = doors::page(
            &store.pool,
            store.dialect,
            &query.filter(),
            after.as_ref(),
            limit,
        )
        .await?;
        let now = self.now();
        Ok(rows
            .into_iter()
            .map(|row| {
                let record = serde_json::from_str(&row.record)
                    .map(|data| DoorRecord {
                        data,
                        updated_at: from_ms(row.at),
                        age: Duration::from_millis(
                            u64::try_from(now.saturating_sub(row.at)).unwrap_or(0),
                        ),
                    })
                    .map_err(|e| InboxError::CorruptRecord {
                        door: query.door.name(),
                        id: row.id.clone(),
                        reason: e.to_string(),
                    });
                Listed {
                    cursor: RecordCursor {
                        at: row.at,
                        id: row.id.clone(),
                    },
                    id: row.id,
                    record,
                }
            })
            .collect())
    }

    /// How many records `query` takes, counted by the database.
    pub async fn count_records(&self, query: &RecordQuery) -> Result<u64, InboxError> {
        let store = &self.inner.store;
        let n = doors::count(&store.pool, store.dialect, &query.filter()).await?;
        Ok(u64::try_from(n).unwrap_or(0))
    }
}
