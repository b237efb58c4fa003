//! Standard Webhooks signatures: `v1,` and the base64 HMAC-SHA256, keyed by the secret's
//! bytes, of `{webhook-id}.{webhook-timestamp}.{body}`.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// A webhook's signing key, decoded from its `whsec_…` secret.
#[derive(Clone)]
pub(crate) struct Key(Hmac<Sha256>);

impl Key {
    /// The key of a secret as Standard Webhooks writes it: `whsec_` and the base64 of
    /// 24 to 64 random bytes. The error says what is wrong without repeating the secret.
    pub(crate) fn parse(secret: &str) -> Result<Key, String> {
        let Some(encoded) = secret.strip_prefix("whsec_") else {
            return Err("the secret must start with `whsec_` (Standard Webhooks)".to_owned());
        };
        let bytes = STANDARD
            .decode(encoded)
            .map_err(|_| "the secret after `whsec_` is not base64".to_owned())?;
        if !(24..=64).contains(&bytes.len()) {
            return Err(format!(
                "the secret decodes to {} bytes; Standard Webhooks keys are 24 to 64",
                bytes.len()
            ));
        }
        Hmac::<Sha256>::new_from_slice(&bytes)
            .map(Key)
            .map_err(|_| "the secret is not a usable HMAC key".to_owned())
    }

    /// The `webhook-signature` header's value for one delivery attempt.
    pub(crate) fn sign(&self, id: &str, timestamp: i64, body: &str) -> String {
        let mut mac = self.0.clone();
        mac.update(id.as_bytes());
        mac.update(b".");
        mac.update(timestamp.to_string().as_bytes());
        mac.update(b".");
        mac.update(body.as_bytes());
        format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_specifications_example_signs_as_published() {
        // The example of the Standard Webhooks specification.
        let key = Key::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        let body = r#"{"test": 2432232314}"#;
        assert_eq!(
            key.sign("msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
    }

    #[test]
    fn a_malformed_secret_is_refused_without_being_repeated() {
        for bad in [
            "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
            "whsec_!!!",
            "whsec_c2hvcnQ=",
        ] {
            let Err(why) = Key::parse(bad) else {
                panic!("{bad} was accepted")
            };
            assert!(!why.contains(bad.trim_start_matches("whsec_")), "{why}");
        }
        assert!(Key::parse(&format!("whsec_{}", STANDARD.encode([7; 32]))).is_ok());
    }
}
