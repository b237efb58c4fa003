//! The two codes a suspension carries as plain strings on the wire: what a request asks
//! for ([`RequestKind`]) and why an answer refuses ([`Refusal`]). Each has variants for
//! the codes every port knows and an `Other` escape for any other string, so a code one
//! port invents still round-trips through another unchanged.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Declares a string code: its variants and their wire strings, plus the `Other` escape,
/// the conversions from and to strings, and equality by the string. Comparing with a bare
/// string is not among them: each code adds only the one form its users write (below).
macro_rules! string_code {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$doc:meta])* $variant:ident = $text:literal, )+
        }
        escape: $(#[$other_doc:meta])*
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone)]
        #[non_exhaustive]
        pub enum $name {
            $( $(#[$doc])* $variant, )+
            $(#[$other_doc])*
            Other(String),
        }

        impl $name {
            /// The code as it is written on the wire.
            pub fn as_str(&self) -> &str {
                match self {
                    $( $name::$variant => $text, )+
                    $name::Other(text) => text,
                }
            }
        }

        impl From<&str> for $name {
            fn from(text: &str) -> Self {
                match text {
                    $( $text => $name::$variant, )+
                    other => $name::Other(other.to_owned()),
                }
            }
        }

        impl From<String> for $name {
            fn from(text: String) -> Self {
                match text.as_str() {
                    $( $text => $name::$variant, )+
                    _ => $name::Other(text),
                }
            }
        }

        impl From<$name> for String {
            fn from(code: $name) -> String {
                match code {
                    $name::Other(text) => text,
                    known => known.as_str().to_owned(),
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        // Equal when the strings are: `Other("approval")` built by hand is `Approval`.
        impl PartialEq for $name {
            fn eq(&self, other: &Self) -> bool {
                self.as_str() == other.as_str()
            }
        }

        impl Eq for $name {}

        impl Hash for $name {
            fn hash<H: Hasher>(&self, state: &mut H) {
                self.as_str().hash(state);
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        // Read as a borrowed string where the input allows: a known code allocates nothing.
        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct Code;
                impl serde::de::Visitor<'_> for Code {
                    type Value = $name;

                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str("a string")
                    }

                    fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<$name, E> {
                        Ok($name::from(text))
                    }

                    fn visit_string<E: serde::de::Error>(self, text: String) -> Result<$name, E> {
                        Ok($name::from(text))
                    }
                }
                deserializer.deserialize_str(Code)
            }
        }
    };
}

string_code! {
    /// What a [`Request`](crate::Request) asks for, written on the wire as its string
    /// (`"approval"`, …). Like `http::Method`, the kinds every port knows are variants and
    /// any other string is kept in [`Other`](RequestKind::Other).
    ///
    /// `req.kind == "approval"` still compiles, as it did when the kind was a `String`;
    /// code of its own matches on the variants, and [`as_str`](RequestKind::as_str) gives
    /// the wire string:
    ///
    /// ```
    /// use toolnexus::{Request, RequestKind};
    ///
    /// let req = Request::new("approval", "Buy a gpu?");
    /// assert_eq!(req.kind, RequestKind::Approval);
    /// assert!(req.kind == "approval" && req.kind.as_str() == "approval");
    /// let custom = Request::new("payment", "Pay $40?");
    /// assert_eq!(custom.kind, RequestKind::Other("payment".into()));
    /// assert_eq!(serde_json::to_value(&custom).unwrap()["kind"], "payment");
    /// ```
    pub enum RequestKind {
        /// `"approval"`: a person says yes or no.
        Approval = "approval",
        /// `"authorization"`: a person signs in, usually at the request's `url`.
        Authorization = "authorization",
        /// `"input"`: a person fills in a form (`data.schema`) or types an answer.
        Input = "input",
        /// `"question"`: a person answers a question.
        Question = "question",
    }
    escape:
    /// Any other kind, as written.
}

string_code! {
    /// Why an [`Answer`](crate::Answer) refuses its request: a code, written on the wire
    /// as the answer's `reason` string. The person's own words travel apart, in
    /// [`Answer::note()`](crate::Answer::note()).
    ///
    /// A reason that is none of the known codes (free text an older host or another port
    /// wrote, or `Answer::decline(id, "too dear")`) is kept in
    /// [`Other`](Refusal::Other) and read as a decline.
    ///
    /// ```
    /// use toolnexus::{Answer, Refusal};
    ///
    /// let no = Answer::decline("r1", "cancelled");
    /// assert_eq!(no.reason, Some(Refusal::Cancelled));
    /// assert_eq!(no.reason.as_deref(), Some("cancelled"));
    /// assert_eq!(Answer::decline("r1", "too dear").reason, Some(Refusal::Other("too dear".into())));
    /// ```
    pub enum Refusal {
        /// `"declined"`: a person said no.
        Declined = "declined",
        /// `"cancelled"`: a person backed out (a sign-in, a form) rather than saying no.
        Cancelled = "cancelled",
        /// `"expired"`: nobody answered before the request's deadline.
        Expired = "expired",
        /// `"superseded"`: a new message came while the call waited, so it was set aside
        /// unanswered.
        Superseded = "superseded",
    }
    escape:
    /// Any other reason, as written.
}

/// `req.kind == "approval"`, as written when the kind was a `String`.
impl PartialEq<&str> for RequestKind {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// `answer.reason.as_deref() == Some("declined")` reads the code, as it did when the
/// reason was a `String`.
impl Deref for Refusal {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;

    #[test]
    fn a_code_reads_the_same_from_text_and_from_a_value() {
        for (wire, code) in [
            ("approval", RequestKind::Approval),
            ("payment", RequestKind::Other("payment".into())),
        ] {
            let from_text: RequestKind = serde_json::from_str(&json!(wire).to_string()).unwrap();
            let from_value = RequestKind::deserialize(&Value::from(wire)).unwrap();
            assert_eq!((&from_text, &from_value), (&code, &code));
        }
        assert!(serde_json::from_str::<RequestKind>("7").is_err());
    }
}
