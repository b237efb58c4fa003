//! Who is signed in on the page: the host's own authentication
//! ([`Identify`](crate::Identify)), a trusted reverse proxy's headers, or, failing both, the
//! holder of the access token.

use std::net::{IpAddr, SocketAddr};

use axum::extract::ConnectInfo;
use axum::http::request::Parts;
use axum::http::HeaderMap;

use crate::Person;

/// The person a trusted proxy (oauth2-proxy and its like) names, when the connection comes
/// from one of `proxies`: `X-Forwarded-Email`, else `X-Forwarded-User`, with the groups of
/// `X-Forwarded-Groups` (comma-separated). From anywhere else the headers are anyone's to
/// send, so they are ignored; so are they when the server was not given the peer's address
/// (`into_make_service_with_connect_info::<SocketAddr>()`).
pub(crate) fn from_proxy(parts: &Parts, proxies: &[IpAddr]) -> Option<Person> {
    let ConnectInfo(peer) = parts.extensions.get::<ConnectInfo<SocketAddr>>()?;
    if !proxies.contains(&canonical(peer.ip())) {
        return None;
    }
    let headers = &parts.headers;
    let user = single(headers, "x-forwarded-user");
    let id = single(headers, "x-forwarded-email").or(user)?;
    let mut person = Person::new(id);
    if let Some(user) = user.filter(|u| *u != id) {
        person = person.name(user);
    }
    if let Some(groups) = single(headers, "x-forwarded-groups") {
        person = person.groups(groups.split(',').map(str::trim).filter(|g| !g.is_empty()));
    }
    Some(person)
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

    #[test]
    fn only_the_configured_proxy_names_a_person() {
        let proxy: IpAddr = "10.0.0.2".parse().unwrap();
        let headers = [
            ("x-forwarded-email", "ada@example.com"),
            ("x-forwarded-user", "ada"),
            ("x-forwarded-groups", "finance, ops"),
        ];
        let ada = from_proxy(&parts("10.0.0.2:5000", &headers), &[proxy]).unwrap();
        assert_eq!(ada.id, "ada@example.com");
        assert_eq!(ada.display_name(), "ada");
        assert_eq!(ada.groups, ["finance", "ops"]);
        assert_eq!(
            from_proxy(&parts("10.0.0.3:5000", &headers), &[proxy]),
            None
        );
        let doubled = [("x-forwarded-user", "ada"), ("x-forwarded-user", "bob")];
        assert_eq!(from_proxy(&parts("10.0.0.2:1", &doubled), &[proxy]), None);
        let mapped = from_proxy(&parts("[::ffff:10.0.0.2]:1", &headers), &[proxy]);
        assert_eq!(mapped.map(|p| p.id), Some("ada@example.com".to_owned()));
    }
}
