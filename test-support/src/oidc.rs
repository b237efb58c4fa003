//! A real OpenID provider for the suites that check access tokens: panva's
//! `oidc-provider` on a loopback port (scripts/oidc/provider.cjs, on the Node and packages
//! `scripts/test.sh` installs into `target/oidc`, named by `TOOLNEXUS_TEST_OIDC`). Its
//! clients get tokens by client credentials: `partner` (no group), `alice` and `bob`
//! (finance), each with the secret `<id>-secret`. People sign in on its login form, as the
//! inbox page's client `inbox` (secret `inbox-secret`) sends them there: `alice` and `bob`
//! (finance) and `mallory` (no group), each with the password `<login>-password`.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// The provider's script, in the source tree.
const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/oidc/provider.cjs");

/// A running provider, stopped when dropped.
pub struct Provider {
    issuer: String,
    http: reqwest::Client,
    // Held so the process lives as long as the value and is killed with it.
    _child: Child,
}

impl Provider {
    /// Starts a provider on a free loopback port, once it says its issuer URL. Panics
    /// saying what to install when `TOOLNEXUS_TEST_OIDC` is not set.
    pub async fn start() -> Provider {
        let dir = PathBuf::from(std::env::var("TOOLNEXUS_TEST_OIDC").unwrap_or_else(|_| {
            panic!(
                "TOOLNEXUS_TEST_OIDC is not set: run the tests with scripts/test.sh (it installs \
                 oidc-provider and Node 22 from scripts/oidc into target/oidc), or point it at \
                 a directory where `npm ci` of scripts/oidc ran"
            )
        }));
        let node = dir.join("node_modules/.bin/node");
        let mut child = Command::new(&node)
            .arg(SCRIPT)
            .arg("0")
            .env("NODE_PATH", dir.join("node_modules"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", node.display()));
        let stdout = child.stdout.take().expect("the provider's stdout is piped");
        let mut lines = BufReader::new(stdout).lines();
        let first = tokio::time::timeout(Duration::from_secs(60), lines.next_line()).await;
        let issuer = match first {
            Ok(Ok(Some(line))) if line.starts_with("http://127.0.0.1:") => line,
            other => panic!("the OpenID provider did not say its issuer URL: {other:?}"),
        };
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .build()
            .expect("an HTTP client");
        Provider {
            issuer,
            http,
            _child: child,
        }
    }

    /// Its issuer identifier (`http://127.0.0.1:PORT`).
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// A JWT access token for `client` (`partner`, `alice`, `bob`) by client credentials,
    /// for the resource `resource` (its `aud`), with `scope` when given.
    pub async fn token(&self, client: &str, resource: &str, scope: Option<&str>) -> String {
        let secret = format!("{client}-secret");
        let mut form = vec![
            ("grant_type", "client_credentials"),
            ("client_id", client),
            ("client_secret", secret.as_str()),
            ("resource", resource),
        ];
        if let Some(scope) = scope {
            form.push(("scope", scope));
        }
        let body = form
            .iter()
            .map(|(k, v)| format!("{k}={}", encode(v)))
            .collect::<Vec<_>>()
            .join("&");
        let answer = self
            .http
            .post(format!("{}/token", self.issuer))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body)
            .send()
            .await
            .expect("the token endpoint answers");
        let status = answer.status();
        let json: Value = answer
            .json()
            .await
            .expect("the token endpoint answers JSON");
        assert!(
            status.is_success(),
            "the token request failed: {status} {json}"
        );
        json["access_token"]
            .as_str()
            .unwrap_or_else(|| panic!("no access_token in {json}"))
            .to_owned()
    }

    /// A token as the provider issued `client` for `resource` two hours ago, expired an
    /// hour ago, signed with its current key: what a client holding an old token sends.
    pub async fn expired_token(&self, client: &str, resource: &str) -> String {
        let call = format!(
            "expired-token?client={}&resource={}",
            encode(client),
            encode(resource)
        );
        let json = self.test_call(reqwest::Method::GET, &call).await;
        json["access_token"]
            .as_str()
            .unwrap_or_else(|| panic!("no access_token in {json}"))
            .to_owned()
    }

    /// Has the provider sign with a new key from now on (the old ones stay published);
    /// the new key's id.
    pub async fn rotate(&self) -> String {
        self.rotate_to("rotate").await
    }

    /// Has the provider sign with a new key from now on and withdraw the old ones from its
    /// JWKS; the new key's id.
    pub async fn rotate_retiring(&self) -> String {
        self.rotate_to("rotate?retire=1").await
    }

    async fn rotate_to(&self, call: &str) -> String {
        let json = self.test_call(reqwest::Method::POST, call).await;
        json["kid"]
            .as_str()
            .unwrap_or_else(|| panic!("no kid in {json}"))
            .to_owned()
    }

    /// How many times its JWKS has been read.
    pub async fn jwks_reads(&self) -> u64 {
        let json = self.test_call(reqwest::Method::GET, "jwks-reads").await;
        json["reads"]
            .as_u64()
            .unwrap_or_else(|| panic!("no reads in {json}"))
    }

    /// The public half of its current signing key, as SPKI PEM.
    pub async fn public_key_pem(&self) -> String {
        let answer = self
            .http
            .get(format!("{}/test/public-key.pem", self.issuer))
            .send()
            .await
            .expect("the provider answers");
        assert!(answer.status().is_success(), "{}", answer.status());
        answer.text().await.expect("the PEM")
    }

    async fn test_call(&self, method: reqwest::Method, what: &str) -> Value {
        let answer = self
            .http
            .request(method, format!("{}/test/{what}", self.issuer))
            .send()
            .await
            .expect("the provider answers");
        assert!(
            answer.status().is_success(),
            "/test/{what}: {}",
            answer.status()
        );
        answer.json().await.expect("JSON")
    }
}

/// `value` percent-encoded for a form body (RFC 3986 unreserved characters kept).
fn encode(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}
