//! How far the approvals of a request that needs several people came (`data.approvals`).

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::Request;

/// How far the approvals of a request that needs several people came, as a door shows the
/// request (`data.approvals`: `{"count": 1, "quorum": 2, "by": ["ada@example.com"]}`).
/// The inbox writes it ([`Request::with_approvals`]) where it counts the votes; every door
/// reads it with [`Request::approvals`], so each protocol says what the inbox page says.
///
/// ```
/// use toolnexus::halted::Approvals;
/// use toolnexus::Request;
///
/// let so_far = Approvals { count: 1, quorum: 2, by: vec!["ada@example.com".into()] };
/// let shown = Request::new("approval", "Pay?").with_approvals(&so_far);
/// assert_eq!(shown.approvals(), Some(so_far.clone()));
/// assert_eq!(so_far.to_string(), "1 of 2 approvals (ada@example.com)");
/// assert_eq!(Request::new("approval", "Pay?").approvals(), None);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Approvals {
    /// How many distinct people approved.
    pub count: usize,
    /// How many must.
    pub quorum: u32,
    /// Who approved, in order, as the inbox names them.
    #[serde(default)]
    pub by: Vec<String>,
}

/// `1 of 2 approvals (ada@example.com)`, for a person reading the request.
impl fmt::Display for Approvals {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let noun = if self.quorum == 1 {
            "approval"
        } else {
            "approvals"
        };
        write!(f, "{} of {} {noun}", self.count, self.quorum)?;
        if !self.by.is_empty() {
            write!(f, " ({})", self.by.join(", "))?;
        }
        Ok(())
    }
}

impl Request {
    /// How far this request's approvals came (`data.approvals`), when whoever showed it
    /// says; `None` when it does not, or says it in another shape (it is for display
    /// only: who may answer, and how many must, is the request's [`rule`](Request::rule)).
    pub fn approvals(&self) -> Option<Approvals> {
        let approvals = self.data.as_ref()?.get("approvals")?;
        Approvals::deserialize(approvals).ok()
    }

    /// This request as shown with how far its approvals came, at `data.approvals`. A
    /// request without `data` gets an object holding them; one whose `data` is not an
    /// object cannot carry them, and is left as it is.
    pub fn with_approvals(mut self, approvals: &Approvals) -> Self {
        let data = self
            .data
            .get_or_insert_with(|| Value::Object(Default::default()));
        if let Value::Object(data) = data {
            // Plain numbers and strings: they always make JSON.
            if let Ok(value) = serde_json::to_value(approvals) {
                data.insert("approvals".to_owned(), value);
            }
        }
        self
    }
}
