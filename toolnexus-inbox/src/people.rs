//! Who may answer a request: the [`Person`] answering, and the responders a request names
//! (`data.responders`) or the inbox's rules give its kind or agent.

use std::collections::HashMap;

use toolnexus::Request;

/// Someone answering requests: the id recorded as `answered_by` (an email address, or a
/// user name), a display name, and the groups they belong to.
///
/// `Person::from("ada@example.com")` is a person with no groups, which is what a plain
/// string given to [`Inbox::answer_as`](crate::Inbox::answer_as) becomes.
///
/// ```
/// use toolnexus_inbox::Person;
///
/// let ada = Person::new("ada@example.com").name("Ada").groups(["finance"]);
/// assert!(ada.is_one_of(&["group:finance".to_owned()]));
/// assert!(ada.is_one_of(&["ADA@example.com".to_owned()]));
/// assert!(!Person::from("bob@example.com").is_one_of(&["group:finance".to_owned()]));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Person {
    /// What the audit trail and `answered_by` record.
    pub id: String,
    /// How the page greets them; the id when none is given.
    pub name: Option<String>,
    /// The groups they belong to, matched by a responder `group:NAME`.
    pub groups: Vec<String>,
}

impl Person {
    /// A person known by `id` (an email address or user name), in no group.
    pub fn new(id: impl Into<String>) -> Person {
        Person {
            id: id.into(),
            name: None,
            groups: Vec::new(),
        }
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
    /// email addresses compare), or by one of their groups as `group:NAME`.
    pub fn is_one_of(&self, responders: &[String]) -> bool {
        responders.iter().any(|r| match r.strip_prefix("group:") {
            Some(group) => self.groups.iter().any(|g| g == group),
            None => r.eq_ignore_ascii_case(&self.id),
        })
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

/// The inbox's own rules of who may answer, for requests that name nobody themselves.
#[derive(Debug, Clone, Default)]
pub(crate) struct Rules {
    pub(crate) by_kind: HashMap<String, Vec<String>>,
    pub(crate) by_agent: HashMap<String, Vec<String>>,
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
        escalated_to: &[String],
    ) -> Option<Vec<String>> {
        let mut list = named_by(request).or_else(|| {
            self.by_kind
                .get(request.kind.as_str())
                .or_else(|| self.by_agent.get(agent))
                .cloned()
        })?;
        list.extend(escalated_to.iter().cloned());
        Some(list)
    }
}

/// The responders a request names in `data.responders` (strings; other entries ignored).
fn named_by(request: &Request) -> Option<Vec<String>> {
    let list = request.responders()?;
    Some(list.into_iter().map(str::to_owned).collect())
}
