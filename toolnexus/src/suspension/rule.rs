//! A request's rule: who may answer it, how many must approve, whether its arguments may be
//! edited and whether its decision may be remembered — read strictly, so a rule written
//! wrong is an error and never "anyone" or "one person".

use std::fmt;

use serde_json::Value;

use super::Request;

/// What a request's `data` says of who answers it and how, as [`Request::rule`] reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Rule<'a> {
    /// Who may answer (`data.responders`: people by id, groups as `group:NAME`); `None`
    /// when the request names nobody, so the host's own rules decide.
    pub responders: Option<Vec<&'a str>>,
    /// How many distinct people must approve (`data.quorum`); 1 when it names none.
    pub quorum: u32,
    /// Which of the gated call's arguments a person may change (`data.edits`).
    pub edits: Edits<'a>,
    /// Whether an approval may ask to be remembered for the rest of the run although the
    /// rule names responders or a quorum (`data.remember: true`).
    pub rememberable: bool,
    /// Whether the person who asked for the run may not answer it (`data.notRequester:
    /// true`): duties kept apart, as a payment's requester is not its approver.
    pub not_requester: bool,
}

impl Rule<'_> {
    /// Whether the rule restricts who decides: it names responders, or needs more than
    /// one person. Such a decision is given only by those people, and is never taken from
    /// a remembered answer unless the rule allows it.
    pub fn is_restricted(&self) -> bool {
        self.responders.is_some() || self.quorum > 1
    }
}

/// Which arguments of a gated call a person may change when they approve it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Edits<'a> {
    /// Any (no `data.edits`): the edited call must still fit the tool's schema.
    Any,
    /// None (`data.edits: false`): approve as proposed, or refuse.
    None,
    /// Only these fields (`data.edits: ["vendor", …]`).
    Only(Vec<&'a str>),
}

/// A request whose rule is written wrong: a `responders` that is not a list of names, a
/// `quorum` that is not a positive whole number, an `edits` that is neither `false` nor a
/// list of field names. Nothing can be safely read from it, so it is refused, never taken
/// for "anyone".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleError {
    /// The member of `data` at fault.
    pub field: &'static str,
    /// What is wrong with it.
    pub reason: String,
}

impl fmt::Display for RuleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the request's `data.{}` {}", self.field, self.reason)
    }
}

impl std::error::Error for RuleError {}

impl Request {
    /// This request's rule, read strictly: `data.responders` must be a non-empty list of
    /// non-empty strings, `data.quorum` a positive whole number (`2.0` counts as 2, as
    /// protocols with only doubles write it), `data.edits` `false` or a list of field
    /// names, `data.remember` and `data.notRequester` booleans. Absent members are the defaults: anyone, one
    /// person, any edit, not rememberable when restricted.
    ///
    /// ```
    /// use toolnexus::serde_json::json;
    /// use toolnexus::{Edits, Request};
    ///
    /// let pay = Request::new("approval", "Pay?").with_data(json!({
    ///     "responders": ["group:finance"], "quorum": 2, "edits": ["vendor"]
    /// }));
    /// let rule = pay.rule().unwrap();
    /// assert_eq!(rule.responders, Some(vec!["group:finance"]));
    /// assert_eq!(rule.quorum, 2);
    /// assert_eq!(rule.edits, Edits::Only(vec!["vendor"]));
    /// assert!(rule.is_restricted());
    ///
    /// let odd = Request::new("approval", "Pay?").with_data(json!({"quorum": "2"}));
    /// assert_eq!(odd.rule().unwrap_err().field, "quorum");
    /// let anyone = Request::new("approval", "Pay?").with_data(json!({"responders": "finance"}));
    /// assert_eq!(anyone.rule().unwrap_err().field, "responders");
    /// ```
    pub fn rule(&self) -> Result<Rule<'_>, RuleError> {
        let data = self.data.as_ref().and_then(Value::as_object);
        let member = |name: &str| data.and_then(|d| d.get(name)).filter(|v| !v.is_null());
        let responders = match member("responders") {
            None => None,
            Some(list) => Some(names(list).ok_or_else(|| {
                RuleError {
                    field: "responders",
                    reason: "must be a non-empty list of names (people by id, groups as \
                         `group:NAME`)"
                        .to_owned(),
                }
            })?),
        };
        let quorum = match member("quorum") {
            None => 1,
            Some(n) => whole(n).ok_or_else(|| RuleError {
                field: "quorum",
                reason: format!("must be a positive whole number, not {n}"),
            })?,
        };
        let edits = match member("edits") {
            None | Some(Value::Bool(true)) => Edits::Any,
            Some(Value::Bool(false)) => Edits::None,
            Some(list) => Edits::Only(names(list).ok_or_else(|| RuleError {
                field: "edits",
                reason: "must be `false` or a non-empty list of field names".to_owned(),
            })?),
        };
        let flag = |field: &'static str| match member(field) {
            None => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(other) => Err(RuleError {
                field,
                reason: format!("must be a boolean, not {other}"),
            }),
        };
        Ok(Rule {
            responders,
            quorum,
            edits,
            rememberable: flag("remember")?,
            not_requester: flag("notRequester")?,
        })
    }
}

/// A non-empty list of non-empty strings.
fn names(list: &Value) -> Option<Vec<&str>> {
    let list = list.as_array().filter(|l| !l.is_empty())?;
    list.iter()
        .map(|v| v.as_str().filter(|s| !s.is_empty() && *s != "group:"))
        .collect()
}

/// A positive whole number that fits a `u32`, written as an integer or a whole double.
pub(crate) fn whole(n: &Value) -> Option<u32> {
    let n = n.as_u64().or_else(|| {
        n.as_f64()
            .filter(|f| f.fract() == 0.0 && *f >= 1.0 && *f <= f64::from(u32::MAX))
            .map(|f| f as u64)
    })?;
    u32::try_from(n).ok().filter(|&n| n > 0)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn rule_of(data: Value) -> Result<Rule<'static>, RuleError> {
        let request = Box::leak(Box::new(Request::new("approval", "Go?").with_data(data)));
        request.rule()
    }

    #[test]
    fn malformed_members_are_errors_never_defaults() {
        for (data, field) in [
            (json!({"responders": []}), "responders"),
            (json!({"responders": [7]}), "responders"),
            (json!({"responders": ["ada", ""]}), "responders"),
            (json!({"responders": {"group": "finance"}}), "responders"),
            (json!({"quorum": 0}), "quorum"),
            (json!({"quorum": 1.5}), "quorum"),
            (json!({"quorum": -2}), "quorum"),
            (json!({"quorum": 5e9}), "quorum"),
            (json!({"edits": "vendor"}), "edits"),
            (json!({"edits": []}), "edits"),
            (json!({"remember": "yes"}), "remember"),
            (json!({"notRequester": 1}), "notRequester"),
        ] {
            assert_eq!(rule_of(data.clone()).unwrap_err().field, field, "{data}");
        }
    }

    #[test]
    fn absent_members_are_the_defaults() {
        let rule = rule_of(json!({"tool": "t"})).unwrap();
        assert_eq!(rule.responders, None);
        assert_eq!(rule.quorum, 1);
        assert_eq!(rule.edits, Edits::Any);
        assert!(!rule.rememberable);
        assert!(!rule.is_restricted());
        assert!(Request::new("approval", "Go?").rule().is_ok());
        assert_eq!(rule_of(json!({"quorum": 2.0})).unwrap().quorum, 2);
        assert_eq!(rule_of(json!({"edits": false})).unwrap().edits, Edits::None);
    }
}
