//! Who is signed in on the page: the host's own authentication
//! ([`Identify`](crate::Identify)), the headers of a reverse proxy the host trusts by name
//! and address, or, failing both, the holder of the access token.

use std::net::{IpAddr, SocketAddr};

use axum::extract::ConnectInfo;
use axum::http::request::Parts;
use axum::http::HeaderMap;

use crate::policy::people::Person;

/// A forwarded header the page may read from a trusted proxy
/// ([`InboxPageBuilder::trust_proxy_headers`](super::InboxPageBuilder::trust_proxy_headers)).
///
/// Name only the headers the proxy itself sets on every request, overwriting whatever the
/// client sent: a proxy passes on headers it does not set, so a header it does not own is
/// the client's to write (a `X-Forwarded-Groups: finance` typed by anyone).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ProxyHeader {
    /// `X-Forwarded-Email`: the person's id.
    Email,
    /// `X-Forwarded-User`: the person's id when no email is forwarded, else their name.
    User,
    /// `X-Forwarded-Groups`: the person's groups, comma-separated.
    Groups,
    /// `X-Forwarded-Proto`: `https` when the browser reached the proxy over TLS, which
    /// makes the session cookie `Secure`.
    Proto,
}

impl ProxyHeader {
    fn name(self) -> &'static str {
        match self {
            ProxyHeader::Email => "x-forwarded-email",
            ProxyHeader::User => "x-forwarded-user",
            ProxyHeader::Groups => "x-forwarded-groups",
            ProxyHeader::Proto => "x-forwarded-proto",
        }
    }
}

/// The proxies in front of the page and what of theirs is believed: nothing unless the host
/// names both the proxies' addresses and the headers they set.
#[derive(Debug, Clone, Default)]
pub(crate) struct Proxy {
    pub(crate) addresses: Vec<IpAddr>,
    pub(crate) headers: Vec<ProxyHeader>,
}

impl Proxy {
    /// The value of forwarded header `which`, when the host trusts it and the connection
    /// comes from one of the proxies. From anywhere else the headers are anyone's to send,
    /// so they are ignored; so are they when the server was not given the peer's address
    /// (`into_make_service_with_connect_info::<SocketAddr>()`).
    fn header<'a>(&self, parts: &'a Parts, which: ProxyHeader) -> Option<&'a str> {
        if !self.headers.contains(&which) {
            return None;
        }
        let ConnectInfo(peer) = parts.extensions.get::<ConnectInfo<SocketAddr>>()?;
        if !self.addresses.contains(&canonical(peer.ip())) {
            return None;
        }
        single(&parts.headers, which.name())
    }

    /// The person the proxy names (oauth2-proxy and its like): the trusted
    /// `X-Forwarded-Email`, else `X-Forwarded-User`, with the groups of a trusted
    /// `X-Forwarded-Groups`.
    pub(crate) fn person(&self, parts: &Parts) -> Option<Person> {
        let user = self.header(parts, ProxyHeader::User);
        let id = self.header(parts, ProxyHeader::Email).or(user)?;
        let mut person = Person::new(id);
        if let Some(user) = user.filter(|u| *u != id) {
            person = person.name(user);
        }
        if let Some(groups) = self.header(parts, ProxyHeader::Groups) {
            person = person.groups(groups.split(',').map(str::trim).filter(|g| !g.is_empty()));
        }
        Some(person)
    }

    /// Whether the proxy says the browser reached it over https.
    pub(crate) fn https(&self, parts: &Parts) -> bool {
        self.header(parts, ProxyHeader::Proto)
            .is_some_and(|proto| proto.eq_ignore_ascii_case("https"))
    }
}

/// A header the proxy sets once; several copies mean someone else added one, so none is
/// believed.
fn single<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    let mut values = headers.get_all(name).iter();
    let value = values.next()?;
    if values.next().is_some() {
        return None;
    }
    value.to_str().ok().map(str::trim).filter(|v| !v.is_empty())
}

/// An IPv4 peer seen through an IPv6 socket (`::ffff:a.b.c.d`) as the IPv4 address it is.
pub(crate) fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::Request;

    fn parts(peer: &str, headers: &[(&str, &str)]) -> Parts {
        let mut request = Request::builder();
        for (k, v) in headers {
            request = request.header(*k, *v);
        }
        let (mut parts, ()) = request.body(()).unwrap().into_parts();
        let peer: SocketAddr = peer.parse().unwrap();
        parts.extensions.insert(ConnectInfo(peer));
        parts
    }

    fn proxy(at: &str, headers: &[ProxyHeader]) -> Proxy {
        Proxy {
            addresses: vec![at.parse().unwrap()],
            headers: headers.to_vec(),
        }
    }

    const ALL: [ProxyHeader; 4] = [
        ProxyHeader::Email,
        ProxyHeader::User,
        ProxyHeader::Groups,
        ProxyHeader::Proto,
    ];

    #[test]
    fn only_the_configured_proxy_names_a_person() {
        let trusted = proxy("10.0.0.2", &ALL);
        let headers = [
            ("x-forwarded-email", "ada@example.com"),
            ("x-forwarded-user", "ada"),
            ("x-forwarded-groups", "finance, ops"),
        ];
        let ada = trusted.person(&parts("10.0.0.2:5000", &headers)).unwrap();
        assert_eq!(ada.id, "ada@example.com");
        assert_eq!(ada.display_name(), "ada");
        assert_eq!(ada.groups, ["finance", "ops"]);
        assert_eq!(trusted.person(&parts("10.0.0.3:5000", &headers)), None);
        let doubled = [("x-forwarded-user", "ada"), ("x-forwarded-user", "bob")];
        assert_eq!(trusted.person(&parts("10.0.0.2:1", &doubled)), None);
        let mapped = trusted.person(&parts("[::ffff:10.0.0.2]:1", &headers));
        assert_eq!(mapped.map(|p| p.id), Some("ada@example.com".to_owned()));
    }

    #[test]
    fn only_the_headers_named_are_read() {
        let headers = [
            ("x-forwarded-email", "ada@example.com"),
            ("x-forwarded-groups", "finance"),
            ("x-forwarded-proto", "https"),
        ];
        let from_proxy = parts("10.0.0.2:1", &headers);
        assert_eq!(proxy("10.0.0.2", &[]).person(&from_proxy), None);
        assert!(!proxy("10.0.0.2", &[]).https(&from_proxy));
        let email_only = proxy("10.0.0.2", &[ProxyHeader::Email]).person(&from_proxy);
        let email_only = email_only.unwrap();
        assert_eq!(email_only.id, "ada@example.com");
        assert!(email_only.groups.is_empty(), "{email_only:?}");
        assert!(proxy("10.0.0.2", &[ProxyHeader::Proto]).https(&from_proxy));
        assert!(!proxy("10.0.0.9", &ALL).https(&from_proxy));
    }
}
