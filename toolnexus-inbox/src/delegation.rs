//! Delegation: a person hands their answering rights to another for a window, so requests
//! they may answer are not held up while they are away.
//!
//! The rights handed over are the giver's as they were when they gave them (their id and
//! groups), checked against each request as the giver would be. An answer given under them
//! is recorded as "bob for ada" and counts as the giver's: toward a quorum, the giver and
//! their delegate are one person. The window is judged by the inbox's clock.

use std::time::SystemTime;

use serde_json::json;

use crate::clock::{from_ms, to_ms};
use crate::people::Person;
use crate::store::delegations::{self, DelegationRow, NewDelegation};
use crate::store::{json, strings_of};
use crate::{Inbox, InboxError};

/// Answering rights one person handed another until a time ([`Inbox::delegate`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Delegation {
    /// Its id, to revoke it by.
    pub id: String,
    /// Who handed their rights over, as they were then (id and groups).
    pub from: Person,
    /// Who may answer for them, by the id they answer as.
    pub to: String,
    /// When it was given.
    pub since: SystemTime,
    /// When it ends (the first instant it no longer holds).
    pub until: SystemTime,
}

impl Delegation {
    /// Whether it holds at `now`.
    pub fn holds_at(&self, now: SystemTime) -> bool {
        self.since <= now && now < self.until
    }
}

/// How a person's id is kept and compared: email addresses compare letter case aside.
pub(crate) fn key_of(id: &str) -> String {
    id.trim().to_ascii_lowercase()
}

impl TryFrom<DelegationRow> for Delegation {
    type Error = InboxError;

    fn try_from(row: DelegationRow) -> Result<Delegation, InboxError> {
        let giver: serde_json::Value =
            serde_json::from_str(&row.from_person).map_err(|e| InboxError::Corrupt {
                id: row.id.clone(),
                reason: format!("delegation: {e}"),
            })?;
        let id = giver["id"].as_str().unwrap_or_default();
        let groups = strings_of(&giver["groups"].to_string());
        let mut from = Person::new(id).groups(groups);
        if let Some(name) = giver["name"].as_str() {
            from = from.name(name);
        }
        Ok(Delegation {
            id: row.id,
            from,
            to: row.to_id,
            since: from_ms(row.created_at),
            until: from_ms(row.until_at.min(row.revoked_at.unwrap_or(i64::MAX))),
        })
    }
}

/// The rows that read back; one that does not is left out (and logged), so a damaged row
/// only ever takes rights away.
pub(crate) fn readable(rows: Vec<DelegationRow>) -> Vec<Delegation> {
    rows.into_iter()
        .filter_map(|row| match Delegation::try_from(row) {
            Ok(d) => Some(d),
            Err(e) => {
                tracing::warn!(error = %e, "skipping an unreadable delegation");
                None
            }
        })
        .collect()
}

impl Inbox {
    /// Hands `from`'s answering rights to `to` from now until `until`, by the inbox's clock:
    /// `to` may then answer what `from` may (by `from`'s id and groups as given here), each
    /// such answer recorded as "`to` for `from`" and counted as `from`'s. Delegating to
    /// oneself, to an empty id, or until a time already past is
    /// [`InboxError::InvalidDelegation`].
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use std::time::{Duration, SystemTime};
    /// use toolnexus_inbox::{Inbox, Person};
    ///
    /// let inbox = Inbox::open("sqlite::memory:").await?;
    /// let ada = Person::new("ada@example.com").groups(["finance"]);
    /// let tomorrow = SystemTime::now() + Duration::from_secs(24 * 3600);
    /// let given = inbox.delegate(ada, "bob@example.com", tomorrow).await?;
    /// assert_eq!(given.to, "bob@example.com");
    /// assert_eq!(inbox.delegations_of("bob@example.com").await?, vec![given]);
    /// # Ok::<(), toolnexus_inbox::InboxError>(())
    /// # }).unwrap();
    /// ```
    pub async fn delegate(
        &self,
        from: impl Into<Person>,
        to: &str,
        until: SystemTime,
    ) -> Result<Delegation, InboxError> {
        let from = from.into();
        let now = self.now();
        let (from_id, to_id) = (key_of(&from.id), key_of(to));
        let invalid = |why: &str| Err(InboxError::InvalidDelegation(why.to_owned()));
        if from_id.is_empty() || to_id.is_empty() {
            return invalid("both people must be named by their ids");
        }
        if from_id == to_id {
            return invalid("a person cannot hand their rights to themselves");
        }
        let until_ms = to_ms(until);
        if until_ms <= now {
            return invalid("it would end before it starts");
        }
        let id = uuid::Uuid::new_v4().to_string();
        let giver = json!({"id": from.id, "name": from.name, "groups": from.groups});
        let giver = json(&id, &giver)?;
        delegations::insert(
            &self.inner.store.pool,
            &NewDelegation {
                id: &id,
                from_id: &from_id,
                from_person: &giver,
                to_id: &to_id,
                until: until_ms,
                at: now,
            },
        )
        .await?;
        tracing::info!(delegation = %id, from = %from.id, to = %to_id, "answering rights delegated");
        Ok(Delegation {
            id,
            from,
            to: to_id,
            since: from_ms(now),
            until: from_ms(until_ms),
        })
    }

    /// Ends delegation `id` now; only its giver (`by`) may.
    /// [`InboxError::UnknownDelegation`] when `by` gave no such delegation still in force.
    pub async fn revoke_delegation(&self, id: &str, by: &str) -> Result<(), InboxError> {
        let pool = &self.inner.store.pool;
        if delegations::revoke(pool, id, &key_of(by), self.now()).await? {
            tracing::info!(delegation = %id, "delegation revoked");
            Ok(())
        } else {
            Err(InboxError::UnknownDelegation(id.to_owned()))
        }
    }

    /// The delegations in force now that `person` gave or was given, oldest first.
    pub async fn delegations_of(&self, person: &str) -> Result<Vec<Delegation>, InboxError> {
        let rows =
            delegations::in_force_of(&self.inner.store.pool, &key_of(person), self.now()).await?;
        Ok(readable(rows))
    }
}
