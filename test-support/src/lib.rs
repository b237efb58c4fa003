//! What the workspace's test suites share, so each crate's suites use one copy:
//! [`fixtures`] on the scripted model, the [`example_bin`] programs as a user starts
//! them, [`wait`]ing for what happens elsewhere, a [`clock`] the test moves on, the
//! [`temporal`] server and CLI the test command starts, [`receipts`] checked by a verifier
//! written apart from the inbox's, the [`sdk`]s' Python, [`names`] no other test uses,
//! [`user_crate`]s checked as a user's cargo checks them,
//! (feature `databases`) a database of its own per test, on either engine or
//! [`both_engines!`], (feature `oidc`) a real OpenID provider to take tokens from, and
//! (feature `chromium`) headless Chromium sessions.

#[cfg(feature = "chromium")]
pub mod chromium;
pub mod clock;
#[cfg(feature = "databases")]
pub mod databases;
pub mod example_bin;
pub mod fixtures;
pub mod names;
#[cfg(feature = "oidc")]
pub mod oidc;
pub mod receipts;
pub mod sdk;
pub mod temporal;
pub mod user_crate;
pub mod wait;
