//! The built web app served beside the AG-UI endpoint: every GET (and HEAD) the endpoint
//! does not answer reads a file of the app's directory. A path that names no file is the
//! app's `index.html`, so an address the app made up (`/?thread=…`) loads the app.
//!
//! A few lines over `tokio::fs` rather than a static-file crate: the example serves one
//! directory of build output, and its dependencies stay the endpoint's.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::body::Body;
use axum::http::{header, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::Router;

/// `endpoint` with the files of `dir` served on the GETs it does not answer, including a
/// GET of `/`, where the endpoint takes only POST.
pub fn beside(endpoint: Router, dir: PathBuf) -> Router {
    let dir = Arc::new(dir);
    let files = move |method: Method, uri: Uri| {
        let dir = dir.clone();
        async move { file(&dir, &method, uri.path()).await }
    };
    endpoint
        .method_not_allowed_fallback(files.clone())
        .fallback(files)
}

async fn file(dir: &Path, method: &Method, path: &str) -> Response {
    if method != Method::GET && method != Method::HEAD {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    }
    let wanted = path.trim_start_matches('/');
    // Only plain names below `dir`: nothing that climbs out or names a root.
    let plain = wanted
        .split('/')
        .all(|part| !part.is_empty() && part != "." && part != ".." && !part.contains('\\'));
    let name = if wanted.is_empty() || !plain {
        "index.html"
    } else {
        wanted
    };
    let (name, bytes) = match tokio::fs::read(dir.join(name)).await {
        Ok(bytes) => (name, bytes),
        // An asset that is not there is a 404; any other address is the app's own.
        Err(_) if name.starts_with("assets/") => return StatusCode::NOT_FOUND.into_response(),
        Err(_) => match tokio::fs::read(dir.join("index.html")).await {
            Ok(bytes) => ("index.html", bytes),
            Err(_) => return StatusCode::NOT_FOUND.into_response(),
        },
    };
    // The build names its assets by their content, so they may be kept for good; the
    // page itself is asked for again each time, so a new build is picked up.
    let cache = if name.starts_with("assets/") {
        "public, max-age=31536000, immutable"
    } else {
        "no-cache"
    };
    let body = if method == Method::HEAD {
        Body::empty()
    } else {
        Body::from(bytes)
    };
    (
        [
            (header::CONTENT_TYPE, content_type(name)),
            (header::CACHE_CONTROL, cache),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        body,
    )
        .into_response()
}

/// The type of a file of a Vite build, by its extension.
fn content_type(name: &str) -> &'static str {
    let ext = name
        .rsplit_once('.')
        .map(|(_, ext)| ext)
        .unwrap_or_default();
    match ext {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" | "map" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "woff2" => "font/woff2",
        "woff" => "font/woff",
        "ttf" => "font/ttf",
        "wasm" => "application/wasm",
        "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}
