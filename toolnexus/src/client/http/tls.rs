//! The rustls crypto provider every HTTP client of the crates runs on.
//!
//! reqwest 0.13 is built here without a provider of its own: the one it would bring,
//! aws-lc-rs, is a second C library to compile beside *ring*, which the tree already
//! builds. A client built without any provider would panic, so each crate makes sure one
//! is in place before it builds a client.

/// Installs *ring* as the process's rustls provider, unless the host already chose one.
///
/// A host that prefers another provider installs it before building its first client;
/// losing a race to another installer is fine, since a provider is then in place.
pub fn ensure_crypto_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}
