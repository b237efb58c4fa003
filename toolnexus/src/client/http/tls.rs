//! The rustls crypto provider every HTTP client of the crates runs on.
//!
//! reqwest 0.13 is built here without a provider of its own: the one it would bring,
//! aws-lc-rs, is a second C library to compile beside *ring*, which the tree already
//! builds. A client built without any provider would panic, so each crate makes sure one
//! is in place before it builds a client.

use std::sync::Arc;

use rustls::crypto::CryptoProvider;

/// Installs *ring* as the process's rustls provider, unless the host already chose one.
///
/// A host that prefers another provider installs it before building its first client;
/// losing a race to another installer is fine, since a provider is then in place.
pub fn ensure_crypto_provider() {
    if CryptoProvider::get_default().is_none() {
        let _ = ring().install_default();
    }
}

/// The process's provider, installed first when no one has: what a client's own TLS
/// configuration is built on, so it runs on the same provider as reqwest's.
pub(crate) fn crypto_provider() -> Arc<CryptoProvider> {
    ensure_crypto_provider();
    CryptoProvider::get_default()
        .cloned()
        .unwrap_or_else(|| Arc::new(ring()))
}

/// The *ring* provider, made here alone. rustls 0.23.48 deprecates its constructor because
/// *ring* has no post-quantum key exchange, and names no other: the only provider it does
/// not deprecate is aws-lc-rs, the C build this crate avoids (see the module docs). Until
/// the crates choose otherwise, the one use is allowed here rather than anywhere a client
/// is built.
fn ring() -> CryptoProvider {
    #[allow(deprecated)]
    rustls::crypto::ring::default_provider()
}
