use toolnexus::tool;

/// Deletes a file
#[tool(approval = "Delete {path?")]
async fn unclosed(path: String) -> String {
    path
}

/// Deletes a file
#[tool(approval = "Delete path}?")]
async fn unopened(path: String) -> String {
    path
}

/// Deletes a file
#[tool(approval = "Delete {}?")]
async fn positional(path: String) -> String {
    path
}

/// Deletes a file
#[tool(approval = "Delete {path:?}?")]
async fn debug(path: String) -> String {
    path
}

fn main() {}
