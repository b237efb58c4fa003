//! Why a sign-in failed: specific in the host's log, never shown to the person, who is
//! told only that it did not complete and may start again. None of it holds a code, a
//! token, a verifier or the client's secret.

use std::fmt;

use crate::policy::oidc::id_token::IdTokenRefused;

/// Why a callback signed nobody in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Failure {
    /// The callback's query is not one a provider sends (a parameter missing, or twice).
    Malformed(&'static str),
    /// Its `state` is of no sign-in under way: never sent, already used, or pushed out.
    UnknownState,
    /// Its sign-in was started longer ago than a sign-in may take.
    Ended,
    /// It reached another browser than the one that started the sign-in.
    OtherBrowser,
    /// Its `iss` names another provider (RFC 9207): a mix-up.
    Issuer,
    /// The provider answered with an error (its code, shortened).
    Provider(String),
    /// Redeeming the code failed; how.
    TokenEndpoint(String),
    /// The ID token was refused; why.
    IdToken(IdTokenRefused),
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Malformed(why) => write!(f, "the callback is malformed: {why}"),
            Failure::UnknownState => f.write_str(
                "the callback's state is of no sign-in under way (never sent, used already, or pushed out)",
            ),
            Failure::Ended => f.write_str("the sign-in took longer than a sign-in may"),
            Failure::OtherBrowser => {
                f.write_str("the callback reached another browser than the one that started the sign-in")
            }
            Failure::Issuer => f.write_str("the callback's iss names another provider"),
            Failure::Provider(error) => write!(f, "the provider answered the error {error}"),
            Failure::TokenEndpoint(why) => write!(f, "the code could not be redeemed: {why}"),
            Failure::IdToken(why) => write!(f, "the ID token was refused: {why}"),
        }
    }
}
