//! Where the page is mounted: a host may serve the router at its root, or under a prefix
//! with `Router::nest` or `Router::nest_service`. Either way axum hands the handlers the
//! path with the prefix taken off, and keeps the address the browser asked for as
//! `OriginalUri`; the difference between the two is the prefix.
//!
//! Every link and redirect the page sends is a reference relative to the address the
//! browser is on, so it resolves under the prefix whatever it is, and still does behind a
//! proxy that adds a prefix of its own. The list is linked at the mount point as the host
//! wrote it (`NestedPath`): `nest("/inbox", …)` routes the list only at `/inbox`, and
//! `nest("/inbox/", …)` only at `/inbox/`.

use axum::extract::{NestedPath, OriginalUri, Request};
use axum::middleware::Next;
use axum::response::Response;

/// The page being served and where the router is mounted, both as paths from the host's
/// root; put in every request's extensions by [`locate`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mount {
    /// The path the browser asked for (`/inbox/r/abc`).
    page: String,
    /// The prefix the router is mounted under, without a trailing slash (`/inbox`); empty
    /// at the host's root.
    prefix: String,
    /// Whether the host mounted the router with a trailing slash (`/inbox/`), where the
    /// list is then routed.
    slash: bool,
}

impl Mount {
    /// Where a request for `original` (the browser's path) reached the router as `nested`
    /// (the same path with the mount prefix taken off).
    pub(crate) fn of(original: &str, nested: &str) -> Mount {
        let prefix = if let Some(prefix) = original.strip_suffix(nested) {
            prefix
        } else if nested == "/" {
            // `/inbox` reaches the router as `/`: the whole path is the prefix.
            original.trim_end_matches('/')
        } else {
            // A path the host rewrote some other way: all that can be told is the
            // router's own view of it.
            return Mount::at(nested);
        };
        Mount {
            page: original.to_owned(),
            prefix: prefix.trim_end_matches('/').to_owned(),
            slash: false,
        }
    }

    /// This mount, the host having written its prefix with a trailing slash or not.
    pub(crate) fn with_slash(self, slash: bool) -> Mount {
        Mount { slash, ..self }
    }

    /// A request for `path` to a router served at the host's root.
    pub(crate) fn at(path: &str) -> Mount {
        Mount {
            page: path.to_owned(),
            prefix: String::new(),
            slash: false,
        }
    }

    /// The reference to `path` (relative to the router's root, like `style.css` or
    /// `r/<id>`) from the page being served.
    pub(crate) fn to(&self, path: &str) -> String {
        relative(&self.page, &format!("{}/{path}", self.prefix))
    }

    /// The reference to the list of waiting requests from the page being served.
    pub(crate) fn list(&self) -> String {
        if self.prefix.is_empty() || self.slash {
            relative(&self.page, &format!("{}/", self.prefix))
        } else {
            relative(&self.page, &self.prefix)
        }
    }

    /// The prefix the router is mounted under, from the host's root, without a trailing
    /// slash; empty at the root.
    pub(crate) fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The reference to the page being served, without its query.
    pub(crate) fn here(&self) -> String {
        relative(&self.page, &self.page)
    }
}

/// Tells every handler where the page is mounted (see the [module documentation](self)).
pub(crate) async fn locate(mut request: Request, next: Next) -> Response {
    let nested = request.uri().path();
    let mount = match request.extensions().get::<OriginalUri>() {
        Some(OriginalUri(original)) => Mount::of(original.path(), nested),
        None => Mount::at(nested),
    };
    let slash = request
        .extensions()
        .get::<NestedPath>()
        .is_some_and(|at| at.as_str().ends_with('/'));
    let mount = mount.with_slash(slash);
    request.extensions_mut().insert(mount);
    next.run(request).await
}

/// The relative reference that leads from the page at path `from` to path `to` (both from
/// the host's root): up to the directory they share, then down.
fn relative(from: &str, to: &str) -> String {
    let dir = &from[..from.rfind('/').map_or(0, |at| at + 1)];
    let mut shared = 0;
    for (at, _) in dir.match_indices('/') {
        if !to.starts_with(&dir[..=at]) {
            break;
        }
        shared = at + 1;
    }
    let ups = dir[shared..].matches('/').count();
    let rest = &to[shared..];
    let mut out = "../".repeat(ups);
    // An empty reference would keep the query, a leading `/` (or `//`) would leave the
    // mount (or the host), and a `:` in the first segment would read as a scheme.
    let first = rest.split('/').next().unwrap_or_default();
    if ups == 0 && (rest.is_empty() || rest.starts_with('/') || first.contains(':')) {
        out.push_str("./");
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_the_root_links_stay_as_they_were() {
        let list = Mount::at("/");
        assert_eq!(list.to("style.css"), "style.css");
        assert_eq!(list.to("r/abc"), "r/abc");
        assert_eq!(list.list(), "./");
        assert_eq!(list.here(), "./");
        let request = Mount::at("/r/abc");
        assert_eq!(request.to("style.css"), "../style.css");
        assert_eq!(request.to("r/def"), "def");
        assert_eq!(request.list(), "../");
        assert_eq!(request.here(), "abc");
    }

    #[test]
    fn under_a_prefix_without_a_trailing_slash() {
        let list = Mount::of("/inbox", "/");
        assert_eq!(list.to("style.css"), "inbox/style.css");
        assert_eq!(list.to("r/abc"), "inbox/r/abc");
        assert_eq!(list.list(), "inbox");
        assert_eq!(list.here(), "inbox");
    }

    #[test]
    fn under_a_prefix_with_a_trailing_slash() {
        let list = Mount::of("/inbox/", "/");
        assert_eq!(list.to("r/abc"), "r/abc");
        assert_eq!(list.list(), "../inbox");
        assert_eq!(list.here(), "./");
    }

    #[test]
    fn mounted_with_a_trailing_slash_the_list_keeps_it() {
        let list = Mount::of("/inbox/", "/").with_slash(true);
        assert_eq!(list.list(), "./");
        assert_eq!(list.to("r/abc"), "r/abc");
        let request = Mount::of("/inbox/r/abc", "/r/abc").with_slash(true);
        assert_eq!(request.list(), "../");
        assert_eq!(request.to("style.css"), "../style.css");
    }

    #[test]
    fn from_a_request_under_a_deep_prefix() {
        let request = Mount::of("/team/a/inbox/r/abc", "/r/abc");
        assert_eq!(request.to("style.css"), "../style.css");
        assert_eq!(request.to("r/def"), "def");
        assert_eq!(request.list(), "../../inbox");
        assert_eq!(request.here(), "abc");
    }

    #[test]
    fn a_path_the_host_rewrote_falls_back_to_the_routers_view() {
        assert_eq!(Mount::of("/elsewhere", "/r/abc"), Mount::at("/r/abc"));
    }

    #[test]
    fn references_never_leave_the_host_or_read_as_a_scheme() {
        assert_eq!(Mount::of("/a:b", "/").list(), "./a:b");
        assert_eq!(relative("/", "//evil.example/x"), ".//evil.example/x");
        assert_eq!(relative("/x", "/"), "./");
    }
}
