//! Delegation: a person hands their answering rights to another for a window, so requests
//! they may answer are not held up while they are away.
//!
//! The rights handed over are the giver's as they were when they gave them (their id and
//! groups), checked against each request as the giver would be. An answer given under them
//! is recorded as "bob for ada" and counts as the giver's: toward a quorum, the giver and
//! their delegate are one person. The window is judged by the inbox's clock.

use std::time::SystemTime;

use serde_json::json;

use crate::clock::{from_ms, ms, rfc3339, to_ms};
use crate::error::InboxError;
use crate::inbox::Inbox;
use crate::policy::people::{key_of, Person};
use crate::records::audit::{AuditKind, Record};
use crate::store::delegations::{self, DelegationRow, NewDelegation};
use crate::store::{json, strings_of};

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

/// The labels the doors and the page answer under when they identify nobody: never a
/// delegate, since whoever reaches the door would hold the rights.
const STAND_INS: [&str; 4] = [
    "a2a client",
    "ag-ui client",
    "mcp client",
    "holder of the inbox token",
];

/// The audit trail of delegation `id`: its own, beside the runs'.
fn trail_of(id: &str) -> String {
    format!("delegation:{id}")
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
    /// oneself, to an empty id, from a door's [stand-in](Person::stand_in) or to a door's
    /// stand-in label, until a time already past, or for longer than the inbox allows
    /// ([`InboxBuilder::max_delegation`](crate::InboxBuilder::max_delegation), 30 days by
    /// default) is [`InboxError::InvalidDelegation`]. The delegation has its own audit
    /// trail, `delegation:ID` ([`Inbox::audit`]), which starts with a `delegated` entry.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use std::time::{Duration, SystemTime};
    /// use toolnexus_inbox::{AuditKind, Inbox, Person};
    ///
    /// let inbox = Inbox::open("sqlite::memory:").await?;
    /// let ada = Person::new("ada@example.com").groups(["finance"]);
    /// let tomorrow = SystemTime::now() + Duration::from_secs(24 * 3600);
    /// let given = inbox.delegate(ada.clone(), "bob@example.com", tomorrow).await?;
    /// assert_eq!(given.to, "bob@example.com");
    /// assert_eq!(inbox.delegations_of("bob@example.com").await?, vec![given.clone()]);
    /// let trail = inbox.audit(&format!("delegation:{}", given.id)).await?;
    /// assert_eq!(trail[0].kind, AuditKind::Delegated);
    ///
    /// let next_year = SystemTime::now() + Duration::from_secs(365 * 24 * 3600);
    /// assert!(inbox.delegate(ada, "bob@example.com", next_year).await.is_err());
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
        let invalid = |why: String| Err(InboxError::InvalidDelegation(why));
        if from_id.is_empty() || to_id.is_empty() {
            return invalid("both people must be named by their ids".to_owned());
        }
        if from_id == to_id {
            return invalid("a person cannot hand their rights to themselves".to_owned());
        }
        if !from.is_identified() {
            return invalid(format!(
                "`{}` stands in for a caller nobody signed in",
                from.id
            ));
        }
        if STAND_INS.contains(&to_id.as_str()) {
            return invalid(format!(
                "`{to_id}` is a door's stand-in, not a person: name the delegate by the id \
                 they sign in with"
            ));
        }
        let until_ms = to_ms(until);
        if until_ms <= now {
            return invalid("it would end before it starts".to_owned());
        }
        let longest = self.inner.max_delegation;
        if until_ms > now.saturating_add(ms(longest)) {
            return invalid(format!(
                "it would last longer than this inbox allows ({} days at most)",
                longest.as_secs() / 86_400
            ));
        }
        let id = uuid::Uuid::new_v4().to_string();
        let giver = json!({"id": from.id, "name": from.name, "groups": from.groups});
        let giver = json(&id, &giver)?;
        let mut tx = self.inner.store.write().await?;
        delegations::insert(
            &mut tx,
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
        let detail = format!("{} to {to_id} until {}", from.id, rfc3339(until_ms));
        Record {
            actor: Some(&from.id),
            detail: Some(&detail),
            ..Record::new(&trail_of(&id), AuditKind::Delegated)
        }
        .append(&mut tx, now)
        .await?;
        tx.commit().await?;
        tracing::info!(delegation = %id, from = %from.id, to = %to_id, "answering rights delegated");
        Ok(Delegation {
            id,
            from,
            to: to_id,
            since: from_ms(now),
            until: from_ms(until_ms),
        })
    }

    /// Ends delegation `id` now; only its giver (`by`) may (an administrator uses
    /// [`revoke_delegation_as_admin`](Self::revoke_delegation_as_admin)).
    /// [`InboxError::UnknownDelegation`] when `by` gave no such delegation still in force.
    /// The revocation is a `delegation_revoked` entry of the delegation's trail.
    pub async fn revoke_delegation(&self, id: &str, by: &str) -> Result<(), InboxError> {
        self.revoke(id, by, Some(&key_of(by))).await
    }

    /// Ends delegation `id` now, whoever gave it, as administrator `admin`: who may
    /// administer is the host's to decide (its sign-in, its roles); the inbox records who
    /// did it in the delegation's trail.
    pub async fn revoke_delegation_as_admin(
        &self,
        id: &str,
        admin: &Person,
    ) -> Result<(), InboxError> {
        if !admin.is_identified() {
            return Err(InboxError::InvalidDelegation(format!(
                "`{}` stands in for a caller nobody signed in",
                admin.id
            )));
        }
        self.revoke(id, &admin.id, None).await
    }

    async fn revoke(&self, id: &str, by: &str, giver: Option<&str>) -> Result<(), InboxError> {
        let now = self.now();
        let mut tx = self.inner.store.write().await?;
        if !delegations::revoke(&mut tx, id, giver, now).await? {
            tx.rollback().await?;
            return Err(InboxError::UnknownDelegation(id.to_owned()));
        }
        let detail = match giver {
            Some(_) => "revoked by its giver",
            None => "revoked by an administrator",
        };
        Record {
            actor: Some(by),
            detail: Some(detail),
            ..Record::new(&trail_of(id), AuditKind::DelegationRevoked)
        }
        .append(&mut tx, now)
        .await?;
        tx.commit().await?;
        tracing::info!(delegation = %id, "delegation revoked");
        Ok(())
    }

    /// The delegations in force now that `person` gave or was given, oldest first.
    pub async fn delegations_of(&self, person: &str) -> Result<Vec<Delegation>, InboxError> {
        let rows =
            delegations::in_force_of(&self.inner.store.pool, &key_of(person), self.now()).await?;
        Ok(readable(rows))
    }
}
