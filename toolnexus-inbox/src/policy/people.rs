//! Who may answer a request: the [`Person`] answering, and the responders a request names
//! (`data.responders`) or the inbox's rules give its kind or agent.

use std::collections::HashMap;

use toolnexus::{Request, RequestKind};

use crate::store::strings_of;

/// Someone answering requests: the id recorded as `answered_by` (an email address, or a
/// user name), a display name, and the groups they belong to.
///
/// `Person::from("ada@example.com")` is a person with no groups, which is what a plain
/// string given to [`Inbox::answer_as`](crate::Inbox::answer_as) becomes.
///
/// ```
/// use toolnexus_inbox::{Person, Responder};
///
/// let ada = Person::new("ada@example.com").name("Ada").groups(["finance"]);
/// assert!(ada.is_one_of(&[Responder::group("finance")]));
/// assert!(ada.is_one_of(&[Responder::person("ADA@example.com")]));
/// assert!(!Person::from("bob@example.com").is_one_of(&[Responder::group("finance")]));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Person {
    /// What the audit trail and `answered_by` record.
    pub id: String,
    /// How the page greets them; the id when none is given.
    pub name: Option<String>,
    /// The groups they belong to, matched by a [`Responder::Group`].
    pub groups: Vec<String>,
    /// `false` for a door's stand-in for a caller it did not identify
    /// ([`Person::stand_in`]): not a person anyone signed in as.
    identified: bool,
}

impl Person {
    /// A person known by `id` (an email address or user name), in no group.
    pub fn new(id: impl Into<String>) -> Person {
        Person {
            id: id.into(),
            name: None,
            groups: Vec::new(),
            identified: true,
        }
    }

    /// A door's stand-in for a caller it did not identify (`"a2a client"`): what the audit
    /// trail records when anyone may answer. It never counts toward a quorum above one,
    /// since two stand-ins may be one caller, and nobody can delegate to it.
    ///
    /// ```
    /// use toolnexus_inbox::Person;
    ///
    /// assert!(!Person::stand_in("a2a client").is_identified());
    /// assert!(Person::new("ada@example.com").is_identified());
    /// ```
    pub fn stand_in(label: impl Into<String>) -> Person {
        Person {
            identified: false,
            ..Person::new(label)
        }
    }

    /// Whether someone signed in as this person: `false` for a [stand-in](Self::stand_in).
    pub fn is_identified(&self) -> bool {
        self.identified
    }

    /// The name the page shows.
    pub fn name(mut self, name: impl Into<String>) -> Person {
        self.name = Some(name.into());
        self
    }

    /// The groups they belong to.
    pub fn groups<I, S>(mut self, groups: I) -> Person
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.groups = groups.into_iter().map(Into::into).collect();
        self
    }

    /// The name the page shows: the display name, else the id.
    pub fn display_name(&self) -> &str {
        self.name.as_deref().unwrap_or(&self.id)
    }

    /// Whether they are one of `responders`: named by their id (letter case aside, as
    /// email addresses compare), or by one of their groups.
    pub fn is_one_of(&self, responders: &[Responder]) -> bool {
        self.admitted_by(responders).is_some()
    }

    /// The first of `responders` that names them, if any: the rule that lets them answer.
    pub(crate) fn admitted_by<'a>(&self, responders: &'a [Responder]) -> Option<&'a Responder> {
        responders.iter().find(|r| match r {
            Responder::Group(group) => self.groups.iter().any(|g| g == group),
            Responder::Person(id) => id.eq_ignore_ascii_case(&self.id),
        })
    }
}

/// Who may answer a request: a person, by the id they answer as, or everyone in a group.
///
/// Written as text where requests and rules keep them (`data.responders`, webhook bodies):
/// a person as their id, a group as `group:NAME`. [`From<&str>`] reads that spelling, so
/// rules can be written as plain strings.
///
/// ```
/// use toolnexus_inbox::Responder;
///
/// assert_eq!(Responder::from("group:finance"), Responder::group("finance"));
/// assert_eq!(Responder::from("ada@example.com"), Responder::person("ada@example.com"));
/// assert_eq!(Responder::group("finance").to_string(), "group:finance");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Responder {
    /// A person, by the id they answer as.
    Person(String),
    /// Everyone in a group ([`Person::groups`]).
    Group(String),
}

/// How a group is told apart from a person where responders are written as text.
const GROUP: &str = "group:";

impl Responder {
    /// A person, by the id they answer as.
    pub fn person(id: impl Into<String>) -> Responder {
        Responder::Person(id.into())
    }

    /// Everyone in group `name`.
    pub fn group(name: impl Into<String>) -> Responder {
        Responder::Group(name.into())
    }
}

/// The responders a stored JSON list of their text names (an escalation's); anything
/// unreadable is no one.
pub(crate) fn stored_responders(json: Option<&str>) -> Vec<Responder> {
    let names = json.map(strings_of).unwrap_or_default();
    names.iter().map(Responder::from).collect()
}

/// Responders as a person reads them: `ada@example.com, group:finance`.
pub(crate) fn listed(responders: &[Responder]) -> String {
    let names: Vec<String> = responders.iter().map(Responder::to_string).collect();
    names.join(", ")
}

impl From<&str> for Responder {
    fn from(text: &str) -> Responder {
        match text.strip_prefix(GROUP) {
            Some(group) => Responder::Group(group.to_owned()),
            None => Responder::Person(text.to_owned()),
        }
    }
}

impl From<String> for Responder {
    fn from(text: String) -> Responder {
        Responder::from(text.as_str())
    }
}

impl From<&String> for Responder {
    fn from(text: &String) -> Responder {
        Responder::from(text.as_str())
    }
}

impl std::fmt::Display for Responder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Responder::Person(id) => f.write_str(id),
            Responder::Group(name) => write!(f, "{GROUP}{name}"),
        }
    }
}

impl serde::Serialize for Responder {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl From<&str> for Person {
    fn from(id: &str) -> Person {
        Person::new(id)
    }
}

impl From<String> for Person {
    fn from(id: String) -> Person {
        Person::new(id)
    }
}

impl From<&String> for Person {
    fn from(id: &String) -> Person {
        Person::new(id.as_str())
    }
}

impl From<&Person> for Person {
    fn from(person: &Person) -> Person {
        person.clone()
    }
}

/// Where an answer comes from.
pub(crate) enum Source {
    /// A person (`answer_as`), or nobody in particular (`answer`).
    Person(Option<Person>),
    /// The inbox itself, applying a kind's expiry action: not a person's decision, so
    /// neither the deadline nor who may answer applies.
    Expiry,
}

impl Source {
    pub(crate) fn person(&self) -> Option<&Person> {
        match self {
            Source::Person(who) => who.as_ref(),
            Source::Expiry => None,
        }
    }

    pub(crate) fn who(&self) -> Option<&str> {
        self.person().map(|p| p.id.as_str())
    }
}

/// The inbox's own rules of who may answer, for requests that name nobody themselves.
#[derive(Debug, Clone, Default)]
pub(crate) struct Rules {
    pub(crate) by_kind: HashMap<RequestKind, Vec<Responder>>,
    pub(crate) by_agent: HashMap<String, Vec<Responder>>,
}

impl Rules {
    /// Who may answer `request` of a run parked under `agent`: the request's own
    /// `data.responders` first, else the rule for its kind, else the rule for its agent,
    /// and then whoever an escalation added (`escalated_to`); `None` when nothing limits
    /// it (anyone who may open the inbox may answer, escalated or not).
    pub(crate) fn responders(
        &self,
        request: &Request,
        agent: &str,
        escalated_to: &[Responder],
    ) -> Option<Vec<Responder>> {
        let mut list = named_by(request).or_else(|| {
            self.by_kind
                .get(&request.kind)
                .or_else(|| self.by_agent.get(agent))
                .cloned()
        })?;
        list.extend(escalated_to.iter().cloned());
        Some(list)
    }
}

/// The responders a request names in `data.responders` (strings; other entries ignored).
fn named_by(request: &Request) -> Option<Vec<Responder>> {
    let list = request.responders()?;
    Some(list.into_iter().map(Responder::from).collect())
}

/// How a person's id is kept and compared: email addresses compare letter case aside.
pub(crate) fn key_of(id: &str) -> String {
    id.trim().to_ascii_lowercase()
}
