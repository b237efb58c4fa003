use toolnexus::{tool, Toolkit};

#[tool]
async fn undocumented(item: String) -> String {
    item
}

/// Documented, but the option wins and says nothing
#[tool(description = "  ")]
async fn blank(item: String) -> String {
    item
}

fn main() {
    // The struct still exists, so its uses add no errors of their own.
    let _ = Toolkit::builder().tool(Undocumented).tool(Blank).build();
}
