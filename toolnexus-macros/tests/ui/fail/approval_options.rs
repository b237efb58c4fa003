use toolnexus::tool;

/// Deletes a file
#[tool(approval = "Delete {path}?", approval(when = path.is_empty()))]
async fn twice(path: String) -> String {
    path
}

/// Deletes a file
#[tool(approval(prompt = "Delete {path}?", unless = path.is_empty()))]
async fn unknown_key(path: String) -> String {
    path
}

/// Deletes a file
#[tool(approval = 5)]
async fn not_a_string(path: String) -> String {
    path
}

/// Deletes a file
#[tool(approval(prompt = format!("Delete {path}?")))]
async fn prompt_not_a_string(path: String) -> String {
    path
}

/// Deletes a file
#[tool(approval(when))]
async fn when_without_value(path: String) -> String {
    path
}

fn main() {}
