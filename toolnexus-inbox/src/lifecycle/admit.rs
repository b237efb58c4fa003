//! Who an answer counts as: the person answering, when they may answer themselves, else the
//! person whose rights they hold by a delegation in force; and never someone who already
//! counts toward the request.

use crate::error::InboxError;
use crate::lifecycle::vote::{counted_already, StoredVote};
use crate::policy::delegation::Delegation;
use crate::policy::people::key_of;
use crate::policy::people::{Person, Responder};

/// The person an answer counts as, and the rule that let it be given.
pub(crate) struct Admitted {
    /// Whose rights it was given under, when they are not the answering person's own.
    pub(crate) for_whom: Option<String>,
    /// What let it be given, as [`Vote::rule`](crate::Vote::rule) describes.
    pub(crate) rule: String,
}

/// What an answer to `request` is judged by.
pub(crate) struct Ballot<'a> {
    pub(crate) request: &'a str,
    /// Who may answer; `None`: anyone.
    pub(crate) responders: Option<&'a [Responder]>,
    /// The delegations in force to the person answering.
    pub(crate) delegated: &'a [Delegation],
    /// The votes given so far.
    pub(crate) votes: &'a [StoredVote],
    /// How many distinct people must approve.
    pub(crate) quorum: u32,
    /// Who asked for the run, when the rule keeps them from answering.
    pub(crate) requester: Option<&'a str>,
}

impl Ballot<'_> {
    /// Admits `who`'s answer, or says why not: [`InboxError::NotAllowed`] when neither
    /// they nor anyone whose rights they hold may answer, [`InboxError::AlreadyCounted`]
    /// when the one they would count as already counts.
    pub(crate) fn admit(&self, who: Option<&Person>) -> Result<Admitted, InboxError> {
        let admitted = self.admit_anyone(who)?;
        // Duties kept apart: neither the requester nor someone holding their rights.
        if let Some(requester) = self.requester {
            let voter = admitted.for_whom.as_deref().or(who.map(|p| p.id.as_str()));
            let same = |id: &str| key_of(id) == key_of(requester);
            let them = who.map(|p| p.id.as_str()).filter(|id| same(id));
            if let Some(id) = them.or(voter.filter(|id| same(id))) {
                return Err(InboxError::Requester {
                    request: self.request.to_owned(),
                    who: id.to_owned(),
                });
            }
        }
        Ok(admitted)
    }

    /// [`admit`](Self::admit) before the requester's exclusion.
    fn admit_anyone(&self, who: Option<&Person>) -> Result<Admitted, InboxError> {
        let not_allowed = || InboxError::NotAllowed {
            request: self.request.to_owned(),
            who: who.map(|p| p.id.clone()),
        };
        let counted = |id: &str| InboxError::AlreadyCounted {
            request: self.request.to_owned(),
            who: id.to_owned(),
        };
        // A door's stand-in may be anyone at all, so it is no one a quorum can count.
        if self.quorum > 1 && who.is_some_and(|p| !p.is_identified()) {
            return Err(not_allowed());
        }
        let Some(list) = self.responders else {
            // Anyone may answer; a quorum still counts people, so it needs to know who.
            let Some(who) = who else {
                return if self.quorum > 1 {
                    Err(not_allowed())
                } else {
                    Ok(own("anyone".to_owned()))
                };
            };
            return match counted_already(self.votes, &who.id, None) {
                Some(twice) => Err(counted(twice)),
                None => Ok(own("anyone".to_owned())),
            };
        };
        let who = who.ok_or_else(not_allowed)?;
        if let Some(entry) = who.admitted_by(list) {
            return match counted_already(self.votes, &who.id, None) {
                Some(twice) => Err(counted(twice)),
                None => Ok(own(entry.to_string())),
            };
        }
        let mut blocked = None;
        for delegation in self.delegated {
            let giver = &delegation.from;
            let Some(entry) = giver.admitted_by(list) else {
                continue;
            };
            match counted_already(self.votes, &who.id, Some(&giver.id)) {
                None => {
                    return Ok(Admitted {
                        for_whom: Some(giver.id.clone()),
                        rule: format!("delegated by {}: {entry}", giver.id),
                    })
                }
                Some(twice) => blocked = Some(twice.to_owned()),
            }
        }
        Err(match blocked {
            Some(twice) => counted(&twice),
            None => not_allowed(),
        })
    }
}

fn own(rule: String) -> Admitted {
    Admitted {
        for_whom: None,
        rule,
    }
}
