//! The prompt of a declared approval, `"Delete {path}?"`: text with `{name}` placeholders,
//! each a parameter's name with an optional format spec (`{amount:.2}`), and `{{` / `}}`
//! for literal braces.
//!
//! Reading only checks the syntax; whether each name is a parameter is checked against
//! the fn (see `tool::check`). The prompt is rewritten with positions in place of names
//! (`"Delete {0}?"`), so the generated `format!` is handed values, never names: a
//! parameter spelled `r#type` is shown by `{type}` though `type` cannot name an argument.

use syn::LitStr;

/// A prompt, read.
#[derive(Clone)]
pub(crate) struct Template {
    /// The literal as written, where errors about it are reported.
    pub(crate) lit: LitStr,
    /// The prompt as a `format!` string with positional placeholders.
    pub(crate) format: String,
    /// The names shown, in order of first use: `{0}` is the first.
    pub(crate) names: Vec<String>,
}

impl Template {
    /// Reads `lit`; a syntax error is reported at the literal.
    pub(crate) fn parse(lit: &LitStr) -> syn::Result<Template> {
        let (format, names) =
            positional(&lit.value()).map_err(|e| syn::Error::new(lit.span(), e))?;
        Ok(Template {
            lit: lit.clone(),
            format,
            names,
        })
    }
}

/// The traits a format spec can pick besides `Display`, by the letter that ends it.
const OTHER_TRAITS: &[char] = &['?', 'x', 'X', 'o', 'b', 'e', 'E', 'p'];

/// `text` with each `{name…}` replaced by `{index…}`, and the names in index order.
fn positional(text: &str) -> Result<(String, Vec<String>), String> {
    let mut out = String::with_capacity(text.len());
    let mut names: Vec<String> = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' | '}' if chars.peek() == Some(&c) => {
                chars.next();
                out.extend([c, c]);
            }
            '}' => {
                return Err(
                    "this prompt has a `}` that closes nothing: write a literal brace \
                            as `}}`"
                        .to_owned(),
                )
            }
            '{' => {
                let mut inner = String::new();
                loop {
                    match chars.next() {
                        Some('}') => break,
                        Some('{') | None => {
                            return Err("this prompt has a `{` that is not closed: a \
                                        placeholder is a parameter's name in braces, \
                                        `{path}`, and a literal brace is written `{{`"
                                .to_owned())
                        }
                        Some(c) => inner.push(c),
                    }
                }
                let (name, spec) = match inner.split_once(':') {
                    Some((name, spec)) => (name, Some(spec)),
                    None => (inner.as_str(), None),
                };
                check_placeholder(&inner, name, spec)?;
                let index = match names.iter().position(|n| n == name) {
                    Some(index) => index,
                    None => {
                        names.push(name.to_owned());
                        names.len() - 1
                    }
                };
                out.push('{');
                out.push_str(&index.to_string());
                if let Some(spec) = spec {
                    out.push(':');
                    out.push_str(spec);
                }
                out.push('}');
            }
            c => out.push(c),
        }
    }
    Ok((out, names))
}

fn check_placeholder(inner: &str, name: &str, spec: Option<&str>) -> Result<(), String> {
    if !is_ident(name) {
        return Err(format!(
            "`{{{inner}}}` in this prompt names no parameter: a placeholder is a parameter's \
             name in braces, e.g. `{{path}}`, and a literal brace is written `{{{{`"
        ));
    }
    let Some(spec) = spec else {
        return Ok(());
    };
    if spec.contains(['$', '*']) {
        return Err(format!(
            "`{{{inner}}}`: a prompt's format spec cannot take a width or precision from \
             another argument (`$`, `*`): write the number, e.g. `{{{name}:.2}}`"
        ));
    }
    if let Some(letter) = spec.chars().last().filter(|c| OTHER_TRAITS.contains(c)) {
        return Err(format!(
            "`{{{inner}}}`: a prompt shows values as text (`Display`, or the argument's JSON), \
             so its spec cannot pick another formatting trait: drop the `{letter}`"
        ));
    }
    Ok(())
}

fn is_ident(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|first| first == '_' || first.is_alphabetic())
        && chars.all(|c| c == '_' || c.is_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::positional;

    fn ok(text: &str) -> (String, Vec<String>) {
        match positional(text) {
            Ok(read) => read,
            Err(e) => panic!("{text}: {e}"),
        }
    }

    #[test]
    fn names_become_positions_in_order_of_first_use() {
        let (format, names) = ok("Move {from} to {to}, then {from:>8} again?");
        assert_eq!(format, "Move {0} to {1}, then {0:>8} again?");
        assert_eq!(names, ["from", "to"]);
        assert_eq!(ok("{{not}} {amount:.2}}}").0, "{{not}} {0:.2}}}");
        assert_eq!(ok("No placeholders").1, Vec::<String>::new());
    }

    #[test]
    fn malformed_placeholders_are_refused_with_the_fix() {
        for (text, says) in [
            ("Delete {path?", "not closed"),
            ("Delete {path {x}}", "not closed"),
            ("Delete path}?", "closes nothing"),
            ("Delete {}?", "names no parameter"),
            ("Delete {0}?", "names no parameter"),
            ("Delete {a b}?", "names no parameter"),
            ("Delete {path:?}", "drop the `?`"),
            ("Delete {path:>w$}", "cannot take a width"),
        ] {
            match positional(text) {
                Ok(read) => panic!("{text} was read as {read:?}"),
                Err(e) => assert!(e.contains(says), "{text}: {e}"),
            }
        }
    }
}
