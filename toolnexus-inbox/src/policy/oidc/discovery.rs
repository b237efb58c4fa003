//! Finding a provider from its issuer URL (OpenID Connect Discovery 1.0 §4): the HTTP
//! client its documents are read with, and its metadata, whose `issuer` must be the one
//! configured.

use std::time::Duration;

use serde_json::{Map, Value};

use super::keys;
use super::secure_url;
use crate::error::InboxError;

/// The client that reads the provider's documents: the host's own, or one that gives up
/// after `timeout` and follows no redirect (a redirect could take the documents anywhere,
/// https or not).
pub(super) fn client(
    issuer: &str,
    http: Option<reqwest::Client>,
    timeout: Duration,
) -> Result<reqwest::Client, InboxError> {
    if let Some(http) = http {
        return Ok(http);
    }
    toolnexus::__private::ensure_crypto_provider();
    reqwest::Client::builder()
        .user_agent(concat!("toolnexus-inbox/", env!("CARGO_PKG_VERSION")))
        .timeout(timeout)
        .connect_timeout(timeout)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| InboxError::InvalidProvider {
            url: issuer.to_owned(),
            reason: "no HTTP client could be built".to_owned(),
            source: Some(Box::new(e)),
        })
}

/// The provider's metadata (`{issuer}/.well-known/openid-configuration`), refused unless
/// it names `issuer` as its own: anything else may be a provider impersonating another.
pub(super) async fn metadata(
    http: &reqwest::Client,
    issuer: &str,
) -> Result<Map<String, Value>, InboxError> {
    let url = format!(
        "{}/.well-known/openid-configuration",
        issuer.trim_end_matches('/')
    );
    let document = keys::get_json(http, &url).await?;
    let Value::Object(metadata) = document else {
        return Err(refuse(
            issuer,
            "its discovery document is not a JSON object",
        ));
    };
    let said = metadata.get("issuer").and_then(Value::as_str);
    if said != Some(issuer) {
        return Err(refuse(
            issuer,
            &format!("its discovery document names the issuer {said:?}, not this one"),
        ));
    }
    Ok(metadata)
}

/// The endpoint the metadata names `name`, which must be https (or http on this host).
pub(super) fn endpoint(
    metadata: &Map<String, Value>,
    name: &str,
    issuer: &str,
) -> Result<String, InboxError> {
    let url = metadata
        .get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| refuse(issuer, &format!("its discovery document has no `{name}`")))?;
    secure_url(url).map_err(|reason| InboxError::InvalidProvider {
        url: url.to_owned(),
        reason,
        source: None,
    })?;
    Ok(url.to_owned())
}

/// The words a metadata field lists (`token_endpoint_auth_methods_supported`…), if it
/// lists any. The page's sign-in (`web`) reads them; access tokens need none.
#[cfg_attr(not(feature = "web"), allow(dead_code))]
pub(super) fn listed(metadata: &Map<String, Value>, name: &str) -> Option<Vec<String>> {
    metadata.get(name).and_then(Value::as_array).map(|items| {
        items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect()
    })
}

fn refuse(issuer: &str, reason: &str) -> InboxError {
    InboxError::InvalidProvider {
        url: issuer.to_owned(),
        reason: reason.to_owned(),
        source: None,
    }
}
