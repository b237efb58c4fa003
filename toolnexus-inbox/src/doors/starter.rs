//! Whose a door's task or thread is: the person who started it, kept in the door's record,
//! sees all of it; the people its waiting requests let answer see what it asks; anyone
//! else is to be told it does not exist. One rule for every door, so a task reads the same
//! to a stranger whichever protocol they come through.

use serde::{Deserialize, Serialize};

use crate::inbox::Inbox;
use crate::policy::people::Person;
use crate::records::parked::Parked;
use crate::records::state::ParkedState;

/// Who started what a door keeps (an A2A task, an AG-UI thread), as the door's record
/// ([`Inbox::keep_record`]) holds them.
///
/// ```
/// use toolnexus_inbox::{Person, Starter};
///
/// let ada = Starter::of(&Person::new("ada@example.com"));
/// assert!(ada.is(&Person::new("Ada@Example.com")));
/// assert!(!ada.is(&Person::stand_in("ada@example.com")));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Starter {
    /// The person's id, as the door identified them.
    pub id: String,
    /// Whether it was a door's [stand-in](Person::stand_in) for a caller it did not
    /// identify: a person who signs in with that id is someone else.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stand_in: bool,
}

impl Starter {
    /// `who`, as the one who started it.
    pub fn of(who: &Person) -> Starter {
        Starter {
            id: who.id.clone(),
            stand_in: !who.is_identified(),
        }
    }

    /// Whether `who` is the one who started it. Ids compare as responders' do, ignoring
    /// ASCII case.
    pub fn is(&self, who: &Person) -> bool {
        self.stand_in != who.is_identified() && self.id.eq_ignore_ascii_case(&who.id)
    }
}

/// How much of a door's task or thread someone may see ([`Inbox::sight`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sight {
    /// All of it: they started it.
    Whole,
    /// What it waits on and how far it came, not its history, transcript or results: they
    /// may answer one of its waiting requests.
    Question,
}

impl Inbox {
    /// What `who` may see of a door's task or thread started by `starter` whose run has
    /// `requests`: all of it when they started it, its question when they
    /// [may answer](Self::may_answer) one of those requests still waiting; `None`
    /// when it is none of their business, which a door answers as it answers an unknown
    /// id, so the id tells them nothing.
    ///
    /// With no starter (a record kept before doors kept them) nobody started it: only the
    /// people who may answer it see it.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use toolnexus_inbox::{Inbox, Person, Sight, Starter};
    ///
    /// let inbox = Inbox::open("sqlite::memory:").await?;
    /// let ada = Person::new("ada@example.com");
    /// let hers = Starter::of(&ada);
    /// assert_eq!(inbox.sight(Some(&hers), &[], &ada), Some(Sight::Whole));
    /// assert_eq!(inbox.sight(Some(&hers), &[], &Person::new("eve@example.com")), None);
    /// assert_eq!(inbox.sight(None, &[], &ada), None);
    /// # Ok::<(), toolnexus_inbox::InboxError>(())
    /// # }).unwrap();
    /// ```
    pub fn sight(
        &self,
        starter: Option<&Starter>,
        requests: &[Parked],
        who: &Person,
    ) -> Option<Sight> {
        if starter.is_some_and(|s| s.is(who)) {
            return Some(Sight::Whole);
        }
        requests
            .iter()
            .any(|p| p.state == ParkedState::Waiting && self.may_answer(p, Some(who)))
            .then_some(Sight::Question)
    }
}

#[cfg(test)]
mod tests {
    use super::Starter;
    use crate::policy::people::Person;

    #[test]
    fn a_stand_in_and_a_person_of_the_same_name_are_two_people() {
        let anonymous = Starter::of(&Person::stand_in("a2a client"));
        assert!(anonymous.is(&Person::stand_in("a2a client")));
        assert!(!anonymous.is(&Person::new("a2a client")));
        let ada = Starter::of(&Person::new("ada@example.com"));
        assert!(!ada.is(&Person::new("eve@example.com")));
    }

    #[test]
    fn a_starter_reads_back_as_it_was_kept() {
        for who in [
            Person::new("ada@example.com"),
            Person::stand_in("a2a client"),
        ] {
            let kept = serde_json::to_string(&Starter::of(&who)).ok();
            let back: Option<Starter> = kept.and_then(|k| serde_json::from_str(&k).ok());
            assert!(back.is_some_and(|s| s.is(&who)), "{who:?}");
        }
    }
}
