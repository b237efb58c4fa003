use toolnexus::tool;

/// Deletes a file
#[tool(approval = "Delete {path?")]
async fn unclosed(path: String) -> String {
    path
}

/// Moves a file
#[tool(approval = "Move path} to {to}?")]
fn unopened(path: String, to: String) {
    let _ = (path, to);
}

/// Deletes a file
#[tool(approval(prompt = "Delete {}?", when = force))]
async fn positional(path: Option<String>, force: bool) -> Result<String, String> {
    path.filter(|_| force).ok_or_else(String::new)
}

/// Copies a file
#[tool(approval = "Copy {path:?}?")]
fn debug(path: Vec<String>) -> usize {
    path.len()
}

fn main() {}
