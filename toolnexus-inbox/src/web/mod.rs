//! The inbox page: people see the waiting requests and answer them.

use crate::Inbox;

/// An axum router serving the inbox page for `inbox`, guarded by `token`.
///
/// This version serves no routes yet.
pub fn router(inbox: Inbox, token: impl Into<String>) -> axum::Router {
    let _ = (inbox, token.into());
    axum::Router::new()
}
