//! How posts to URLs given at run time are sent: the inbox's settings for them, and the
//! client that sends them, which refuses private addresses unless the host allows them.
//!
//! A caller chooses the URL, so without the check a caller could make the server post
//! into its own network (SSRF). The host of a URL is resolved by the client's own resolver,
//! which checks every address it found and hands the connector only those it checked: the
//! connection goes to an address the check saw, so a name that resolves to a public
//! address for the check and to a private one for the connection (DNS rebinding) gains
//! nothing. An address written in the URL itself is checked before the request is sent,
//! since the connector never resolves it.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

use crate::error::InboxError;

/// How posts are delivered ([`InboxBuilder::post_retries`](crate::InboxBuilder::post_retries)
/// and its neighbours), with the client that sends them.
#[derive(Clone)]
pub(crate) struct PostRules {
    pub(crate) max_attempts: u32,
    pub(crate) backoff: Duration,
    pub(crate) timeout: Duration,
    pub(crate) expiry: Duration,
    pub(crate) allow_private: bool,
    pub(crate) http: reqwest::Client,
}

/// The settings before the client is built.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PostSettings {
    pub(crate) max_attempts: u32,
    pub(crate) backoff: Duration,
    pub(crate) timeout: Duration,
    pub(crate) expiry: Duration,
    pub(crate) allow_private: bool,
}

impl Default for PostSettings {
    fn default() -> Self {
        PostSettings {
            max_attempts: 8,
            backoff: Duration::from_secs(1),
            timeout: Duration::from_secs(10),
            expiry: Duration::from_secs(24 * 3600),
            allow_private: false,
        }
    }
}

/// The longest wait between two attempts of a post.
const MAX_BACKOFF: Duration = Duration::from_secs(600);

impl PostSettings {
    pub(crate) fn rules(self) -> Result<PostRules, InboxError> {
        toolnexus::__private::ensure_crypto_provider();
        let http = reqwest::Client::builder()
            .user_agent(concat!("toolnexus-inbox/", env!("CARGO_PKG_VERSION")))
            // A redirect would go to an address nobody checked; a proxy would be the one
            // resolved and checked instead of the receiver.
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .dns_resolver(Checked {
                allow_private: self.allow_private,
            })
            .build()
            .map_err(|e| InboxError::InvalidPost(format!("no client: {}", e.without_url())))?;
        Ok(PostRules {
            max_attempts: self.max_attempts,
            backoff: self.backoff,
            timeout: self.timeout,
            expiry: self.expiry,
            allow_private: self.allow_private,
            http,
        })
    }
}

impl PostRules {
    /// The wait before attempt `attempt + 1`, after `attempt` failed: the first backoff,
    /// doubled after each further failure, at most ten minutes.
    pub(crate) fn backoff(&self, attempt: i64) -> Duration {
        let doublings = u32::try_from(attempt.saturating_sub(1).clamp(0, 20)).unwrap_or(20);
        self.backoff.saturating_mul(1 << doublings).min(MAX_BACKOFF)
    }

    /// Why `url` may not be posted to before anything is resolved: its host is an address
    /// written out that is not public. A name is checked when it is resolved.
    pub(crate) fn refuse_literal(&self, url: &reqwest::Url) -> Option<String> {
        if self.allow_private {
            return None;
        }
        // The URL parser writes an IPv4 host in dotted decimal whatever its spelling, and
        // an IPv6 one in brackets.
        let host = url.host_str()?;
        let host = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host);
        let ip: IpAddr = host.parse().ok()?;
        refused(ip).map(|why| refusal(ip, why))
    }
}

impl fmt::Debug for PostRules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostRules")
            .field("max_attempts", &self.max_attempts)
            .field("allow_private", &self.allow_private)
            .finish_non_exhaustive()
    }
}

fn refusal(ip: IpAddr, why: &str) -> String {
    format!(
        "refused: the receiver's address {ip} is {why}, and private posts are not allowed \
         (InboxBuilder::allow_private_posts)"
    )
}

/// The resolver of the posts' client: the system's lookup, refusing a name with any
/// address that is not public unless private posts are allowed.
struct Checked {
    allow_private: bool,
}

impl reqwest::dns::Resolve for Checked {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let allow_private = self.allow_private;
        let host = name.as_str().to_owned();
        Box::pin(async move {
            // Port 0: the connector sets the URL's.
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if !allow_private {
                // Any private address refuses the name: one name can resolve to both, and
                // the connector may try them all.
                if let Some((ip, why)) = found
                    .iter()
                    .find_map(|a| refused(a.ip()).map(|why| (a.ip(), why)))
                {
                    return Err(refusal(ip, why).into());
                }
            }
            let addrs: reqwest::dns::Addrs = Box::new(found.into_iter());
            Ok(addrs)
        })
    }
}

/// Why a post may not go to `ip` unless private posts are allowed; `None` for a public
/// address.
pub(crate) fn refused(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(ip) => refused_v4(ip),
        IpAddr::V6(ip) => refused_v6(ip),
    }
}

fn refused_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, ..] = ip.octets();
    if ip.is_unspecified() || a == 0 {
        Some("unspecified (this network)")
    } else if ip.is_loopback() {
        Some("a loopback address")
    } else if ip.is_private() {
        Some("a private address (RFC 1918)")
    } else if ip.is_link_local() {
        Some("a link-local address")
    } else if a == 100 && (64..128).contains(&b) {
        Some("a shared (CGNAT) address")
    } else if ip.is_broadcast() {
        Some("the broadcast address")
    } else if ip.is_multicast() {
        Some("a multicast address")
    } else if a >= 240 {
        Some("a reserved address")
    } else {
        None
    }
}

fn refused_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let first = ip.segments()[0];
    // An IPv4 address written as IPv6 reaches the IPv4 host: `::ffff:a.b.c.d`, and
    // NAT64's well-known prefix `64:ff9b::/96`.
    if let Some(v4) = ip.to_ipv4_mapped() {
        return refused_v4(v4);
    }
    if ip.segments()[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        let [.., a, b, c, d] = ip.octets();
        return refused_v4(Ipv4Addr::new(a, b, c, d));
    }
    if ip.is_unspecified() {
        Some("unspecified")
    } else if ip.is_loopback() {
        Some("a loopback address")
    } else if first & 0xfe00 == 0xfc00 {
        Some("a unique local address (fc00::/7)")
    } else if first & 0xffc0 == 0xfe80 {
        Some("a link-local address")
    } else if ip.is_multicast() {
        Some("a multicast address")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn why(ip: &str) -> Option<&'static str> {
        refused(ip.parse().unwrap())
    }

    #[test]
    fn public_addresses_pass() {
        for ip in [
            "93.184.215.14",
            "8.8.8.8",
            "100.63.255.255",
            "100.128.0.0",
            "172.15.255.255",
            "172.32.0.0",
            "192.167.1.1",
            "169.253.1.1",
            "2606:2800:21f:cb07:6820:80da:af6b:8b2c",
            "2001:4860:4860::8888",
            "::ffff:8.8.8.8",
        ] {
            assert_eq!(why(ip), None, "{ip}");
        }
    }

    #[test]
    fn private_loopback_and_link_local_addresses_are_refused() {
        for (ip, expected) in [
            ("127.0.0.1", "a loopback address"),
            ("127.255.0.9", "a loopback address"),
            ("10.1.2.3", "a private address (RFC 1918)"),
            ("172.16.0.1", "a private address (RFC 1918)"),
            ("172.31.255.255", "a private address (RFC 1918)"),
            ("192.168.0.10", "a private address (RFC 1918)"),
            ("169.254.169.254", "a link-local address"),
            ("100.64.0.1", "a shared (CGNAT) address"),
            ("100.127.255.255", "a shared (CGNAT) address"),
            ("0.0.0.0", "unspecified (this network)"),
            ("0.1.2.3", "unspecified (this network)"),
            ("255.255.255.255", "the broadcast address"),
            ("224.0.0.1", "a multicast address"),
            ("240.0.0.1", "a reserved address"),
            ("::1", "a loopback address"),
            ("::", "unspecified"),
            ("fc00::1", "a unique local address (fc00::/7)"),
            ("fd12:3456::1", "a unique local address (fc00::/7)"),
            ("fe80::1", "a link-local address"),
            ("febf::1", "a link-local address"),
            ("ff02::1", "a multicast address"),
            // IPv4 in IPv6 clothing reaches the IPv4 host.
            ("::ffff:127.0.0.1", "a loopback address"),
            ("::ffff:10.0.0.1", "a private address (RFC 1918)"),
            ("::ffff:169.254.169.254", "a link-local address"),
            ("64:ff9b::a9fe:a9fe", "a link-local address"),
        ] {
            assert_eq!(why(ip), Some(expected), "{ip}");
        }
    }

    #[test]
    fn an_address_written_in_the_url_is_refused_before_anything_is_sent() {
        let rules = PostSettings::default().rules().unwrap();
        let url = |u: &str| reqwest::Url::parse(u).unwrap();
        for u in [
            "http://127.0.0.1:9/x?token=t",
            "http://[::1]/x",
            "http://[::ffff:7f00:1]/x",
            // The URL parser reads the other spellings of an IPv4 address as it.
            "http://0x7f.1/x",
            "http://2130706433/x",
        ] {
            let why = rules.refuse_literal(&url(u)).unwrap_or_default();
            assert!(why.contains("loopback"), "{u}: {why}");
            assert!(!why.contains("token"), "{why}");
        }
        assert_eq!(rules.refuse_literal(&url("http://8.8.8.8/x")), None);
        assert_eq!(rules.refuse_literal(&url("http://example.com/x")), None);
        let allowed = PostSettings {
            allow_private: true,
            ..PostSettings::default()
        }
        .rules()
        .unwrap();
        assert_eq!(allowed.refuse_literal(&url("http://127.0.0.1/x")), None);
    }

    #[tokio::test]
    async fn a_name_that_resolves_to_loopback_is_refused_when_resolved() {
        use reqwest::dns::Resolve;
        let check = |allow_private| Checked { allow_private };
        let name = |n: &str| n.parse::<reqwest::dns::Name>().unwrap();
        let refused = check(false).resolve(name("localhost")).await;
        let why = refused.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(why.contains("loopback"), "{why}");
        let allowed = check(true).resolve(name("localhost")).await;
        assert!(allowed.is_ok_and(|mut addrs| addrs.next().is_some()));
    }

    #[test]
    fn the_backoff_doubles_up_to_ten_minutes() {
        let rules = PostSettings::default().rules().unwrap();
        let waits: Vec<u64> = [1, 2, 3, 4]
            .into_iter()
            .map(|a| rules.backoff(a).as_secs())
            .collect();
        assert_eq!(waits, [1, 2, 4, 8]);
        assert_eq!(rules.backoff(12), MAX_BACKOFF);
    }
}
