//! Votes: every person's answer to a request, recorded as it comes. A request that needs
//! several people ([`Request::quorum`](toolnexus::Request::quorum)) collects approvals
//! until the last one it needs, and is declined by the first refusal; one person counts
//! once, whether they answer twice (two tabs, two doors) or a delegate answers for them.

use std::time::SystemTime;

use serde::{Deserialize, Serialize};
use toolnexus::{Answer, Receipt};

use crate::clock::from_ms;
use crate::policy::people::key_of;

/// One person's answer to a request, as the inbox recorded it ([`Parked::votes`]).
///
/// [`Parked::votes`]: crate::Parked::votes
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Vote {
    /// Who answered; `None` for an answer from nobody in particular
    /// ([`Inbox::answer`](crate::Inbox::answer)), or from the inbox itself at a deadline.
    pub by: Option<String>,
    /// Whose rights they answered under, when someone delegated theirs to them.
    pub for_whom: Option<String>,
    /// Whether they approved.
    pub ok: bool,
    /// What they wrote, if anything.
    pub note: Option<String>,
    /// What let them answer: the responder they are (`group:finance`, their id), `anyone`
    /// when the request names nobody, or `expired` for the inbox's own answer at a deadline;
    /// under a delegation, `delegated by <giver>: ` before the giver's.
    pub rule: String,
    /// When it was recorded.
    pub at: SystemTime,
    /// The signed receipt of this answer, when the inbox signs them
    /// ([`InboxBuilder::receipt_key`](crate::InboxBuilder::receipt_key)).
    pub receipt: Option<Receipt>,
}

impl Vote {
    /// Who it counts as: the person they answered for, else themselves.
    pub fn counts_as(&self) -> Option<&str> {
        self.for_whom.as_deref().or(self.by.as_deref())
    }

    /// How a person reads who gave it: `bob@example.com for ada@example.com`, or the one id.
    pub fn label(&self) -> String {
        label(self.by.as_deref(), self.for_whom.as_deref())
    }
}

/// `by for whom`, or `by` alone.
pub(crate) fn label(by: Option<&str>, for_whom: Option<&str>) -> String {
    match (by, for_whom) {
        (Some(by), Some(whom)) => format!("{by} for {whom}"),
        (Some(by), None) => by.to_owned(),
        (None, _) => "someone".to_owned(),
    }
}

/// A vote as the `votes` column keeps it (a JSON list of these).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct StoredVote {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) by: Option<String>,
    #[serde(rename = "for", default, skip_serializing_if = "Option::is_none")]
    pub(crate) for_whom: Option<String>,
    pub(crate) at: i64,
    pub(crate) answer: Answer,
    pub(crate) rule: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) receipt: Option<Receipt>,
}

impl From<StoredVote> for Vote {
    fn from(v: StoredVote) -> Vote {
        Vote {
            ok: v.answer.ok,
            note: v.answer.note().map(str::to_owned),
            by: v.by,
            for_whom: v.for_whom,
            rule: v.rule,
            at: from_ms(v.at),
            receipt: v.receipt,
        }
    }
}

/// The votes a stored column holds; an unreadable column holds none (and is logged), so it
/// can only ever ask for more approvals, never fewer.
pub(crate) fn stored(column: Option<&str>) -> Vec<StoredVote> {
    match column.map(serde_json::from_str::<Vec<StoredVote>>) {
        Some(Ok(votes)) => votes,
        Some(Err(e)) => {
            tracing::warn!(error = %e, "unreadable votes of a request; counting none");
            Vec::new()
        }
        None => Vec::new(),
    }
}

/// How far a request's approvals have come: what the page, webhooks and doors show as
/// "1 of 2 approvals".
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Approvals {
    /// How many distinct people approved.
    pub count: usize,
    /// How many must.
    pub quorum: u32,
    /// Who approved, as [`Vote::label`] reads them, in order.
    pub by: Vec<String>,
}

impl Approvals {
    pub(crate) fn of(votes: &[StoredVote], quorum: u32) -> Approvals {
        let by: Vec<String> = votes
            .iter()
            .filter(|v| v.answer.ok)
            .map(|v| label(v.by.as_deref(), v.for_whom.as_deref()))
            .collect();
        Approvals {
            count: by.len(),
            quorum,
            by,
        }
    }

    /// The approvals of a request with `votes` that needs `quorum` people.
    pub fn from_votes(votes: &[Vote], quorum: u32) -> Approvals {
        let by: Vec<String> = votes.iter().filter(|v| v.ok).map(Vote::label).collect();
        Approvals {
            count: by.len(),
            quorum,
            by,
        }
    }
}

/// The approvals as a request carries them to a door (`data.approvals`).
impl From<&Approvals> for toolnexus::halted::Approvals {
    fn from(approvals: &Approvals) -> Self {
        toolnexus::halted::Approvals {
            count: approvals.count,
            quorum: approvals.quorum,
            by: approvals.by.clone(),
        }
    }
}

/// `1 of 2 approvals (ada@example.com)`, as every door says it.
impl std::fmt::Display for Approvals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        toolnexus::halted::Approvals::from(self).fmt(f)
    }
}

/// The approvals among `votes`.
pub(crate) fn approvals(votes: &[StoredVote]) -> usize {
    votes.iter().filter(|v| v.answer.ok).count()
}

/// Who among `by` and `for_whom` already counts in `votes` (as a voter or as the person a
/// voter answered for), if either does: a person counts once, however they answer.
pub(crate) fn counted_already<'a>(
    votes: &[StoredVote],
    by: &'a str,
    for_whom: Option<&'a str>,
) -> Option<&'a str> {
    let seen = |id: &str| {
        let id = key_of(id);
        votes.iter().any(|v| {
            let voter = v.by.as_deref().map(key_of);
            let principal = v.for_whom.as_deref().map(key_of);
            voter.as_deref() == Some(id.as_str()) || principal.as_deref() == Some(id.as_str())
        })
    };
    if seen(by) {
        return Some(by);
    }
    for_whom.filter(|whom| seen(whom))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vote(by: &str, for_whom: Option<&str>, ok: bool) -> StoredVote {
        let answer = if ok {
            Answer::ok("q")
        } else {
            Answer::decline("q", "declined")
        };
        StoredVote {
            by: Some(by.to_owned()),
            for_whom: for_whom.map(str::to_owned),
            at: 0,
            answer,
            rule: "group:finance".to_owned(),
            receipt: None,
        }
    }

    #[test]
    fn a_person_counts_once_whoever_answers_for_them() {
        let votes = [vote("bob@example.com", Some("ada@example.com"), true)];
        // Ada herself, after Bob approved for her.
        assert_eq!(
            counted_already(&votes, "ADA@example.com", None),
            Some("ADA@example.com")
        );
        // Bob again, as himself.
        assert_eq!(
            counted_already(&votes, "bob@example.com", None),
            Some("bob@example.com")
        );
        // Carol for Ada: Ada is counted.
        assert_eq!(
            counted_already(&votes, "carol@example.com", Some("ada@example.com")),
            Some("ada@example.com")
        );
        assert_eq!(counted_already(&votes, "carol@example.com", None), None);
        assert_eq!(approvals(&votes), 1);
    }

    #[test]
    fn an_unreadable_column_holds_no_votes() {
        assert!(stored(Some("not json")).is_empty());
        assert!(stored(None).is_empty());
        let kept = serde_json::to_string(&[vote("a", None, true)]).unwrap();
        assert_eq!(stored(Some(&kept)).len(), 1);
    }
}
