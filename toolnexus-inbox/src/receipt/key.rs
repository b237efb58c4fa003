//! [`ReceiptKey`]: the private key an inbox signs receipts with.

use std::fmt;
use std::path::Path;

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine as _;
use ring::signature::{Ed25519KeyPair, KeyPair as _};

use super::armor;
use super::error::ReceiptError;
use super::public::PublicKey;
use toolnexus::receipt::{Receipt, Statement};

/// The Ed25519 private key an inbox signs receipts with, loaded from a PKCS#8 key as
/// `openssl genpkey -algorithm ed25519` writes it:
///
/// ```sh
/// openssl genpkey -algorithm ed25519 -out receipts.pem
/// openssl pkey -in receipts.pem -pubout      # the public key, for whoever checks receipts
/// ```
///
/// Its `Debug` shows the key's id only, never key material.
///
/// ```
/// use toolnexus_inbox::receipt::ReceiptKey;
///
/// # let key = ReceiptKey::ephemeral_for_tests().unwrap();
/// assert_eq!(format!("{key:?}"), format!("ReceiptKey({:?})", key.id()));
/// assert!(ReceiptKey::from_pkcs8_pem("not a key").is_err());
/// ```
pub struct ReceiptKey {
    pair: Ed25519KeyPair,
    public: PublicKey,
}

impl ReceiptKey {
    /// A key from a PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`).
    pub fn from_pkcs8_pem(text: &str) -> Result<Self, ReceiptError> {
        Self::from_pkcs8_der(&armor::unwrap(text, "PRIVATE KEY")?)
    }

    /// A key from PKCS#8 DER (v1, as OpenSSL writes it, or v2 with its public key, which
    /// must then match the private key).
    pub fn from_pkcs8_der(der: &[u8]) -> Result<Self, ReceiptError> {
        let pair = Ed25519KeyPair::from_pkcs8_maybe_unchecked(der)
            .map_err(|rejected| ReceiptError::InvalidKey(format!("PKCS#8: {rejected}")))?;
        let public = PublicKey::from_slice(pair.public_key().as_ref())?;
        Ok(ReceiptKey { pair, public })
    }

    /// A key from a file holding a PKCS#8 PEM or its DER.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, ReceiptError> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|source| ReceiptError::KeyFile {
            path: path.to_owned(),
            source,
        })?;
        match std::str::from_utf8(&bytes) {
            Ok(text) if text.contains("-----BEGIN") => Self::from_pkcs8_pem(text),
            _ => Self::from_pkcs8_der(&bytes),
        }
    }

    /// A key from the environment variable `var`, holding a PKCS#8 PEM or the base64 of
    /// its DER (for hosts whose secrets are one line).
    pub fn from_env(var: &str) -> Result<Self, ReceiptError> {
        let text = std::env::var(var).map_err(|_| ReceiptError::MissingKey(var.to_owned()))?;
        if text.contains("-----BEGIN") {
            return Self::from_pkcs8_pem(&text);
        }
        let compact: String = text.chars().filter(|c| !c.is_ascii_whitespace()).collect();
        let der = STANDARD
            .decode(&compact)
            .or_else(|_| URL_SAFE_NO_PAD.decode(compact.trim_end_matches('=')))
            .map_err(|_| ReceiptError::InvalidKey(format!("{var} is neither a PEM nor base64")))?;
        Self::from_pkcs8_der(&der)
    }

    /// For tests only, and not part of the stable API: a fresh key from the system's random
    /// source, whose receipts check out only against this process's
    /// [`public_key`](Self::public_key), so no one can check them once it ends. Public
    /// because other crates' suites sign with it; a host loads its key
    /// ([`from_env`](Self::from_env), [`from_file`](Self::from_file)).
    #[doc(hidden)]
    pub fn ephemeral_for_tests() -> Result<Self, ReceiptError> {
        let random = ring::rand::SystemRandom::new();
        let document = Ed25519KeyPair::generate_pkcs8(&random)
            .map_err(|_| ReceiptError::InvalidKey("the system's random source failed".into()))?;
        Self::from_pkcs8_der(document.as_ref())
    }

    /// The public key that checks this key's receipts.
    pub fn public_key(&self) -> PublicKey {
        self.public.clone()
    }

    /// The id the receipts name this key by ([`PublicKey::id`]).
    pub fn id(&self) -> &str {
        self.public.id()
    }

    /// Signs `statement`: the receipt names this key, and its signature covers the RFC
    /// 8785 bytes of everything but the signature.
    pub fn sign(&self, statement: Statement) -> Receipt {
        let signature = self.pair.sign(&statement.signed_bytes(self.id()));
        Receipt::new(
            statement,
            self.id(),
            URL_SAFE_NO_PAD.encode(signature.as_ref()),
        )
    }
}

impl fmt::Debug for ReceiptKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ReceiptKey").field(&self.id()).finish()
    }
}
