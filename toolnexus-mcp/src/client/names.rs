//! The names the model sees for an MCP server's tools: `<server>__<tool>`, sanitized to
//! the characters every provider accepts, unique within the server.

use std::collections::HashSet;

use toolnexus::Toolkit;

/// One name per tool, in order. Two tools whose names sanitize alike (`a.b`, `a_b`) get
/// `_2`, `_3`… suffixes in the server's order, so every tool stays reachable.
pub(super) fn assign<'a>(server: &str, tools: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut taken = HashSet::new();
    tools
        .map(|tool| {
            let base = Toolkit::declared_name(&format!("{server}__{tool}"));
            let mut name = base.clone();
            let mut n = 2;
            while !taken.insert(name.clone()) {
                name = format!("{base}_{n}");
                n += 1;
            }
            name
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_prefixed_sanitized_and_unique() {
        let names = assign("files", ["read", "dir.list", "dir_list", "süß"].into_iter());
        assert_eq!(
            names,
            [
                "files__read",
                "files__dir_list",
                "files__dir_list_2",
                "files__s__"
            ]
        );
    }
}
