//! How generated code names the runtime crate.
//!
//! `pending!` and `auth_required!` are `macro_rules!` fronts in the runtime that pass their
//! `$crate`, which resolves however the runtime is reached. The attribute macros cannot get
//! a `$crate`: their code reaches everything through `::toolnexus::…`; a user who renames
//! the dependency (`tn = { package = "toolnexus", … }`) has no `::toolnexus`, so the name is
//! read from their Cargo.toml, and `#[tool(crate = "path")]` overrides it for re-exports.

use proc_macro2::{Span, TokenStream, TokenTree};
use proc_macro_crate::{crate_name, FoundCrate};
use syn::{Ident, LitStr, Path};

use crate::diag::Errors;

const RUNTIME: &str = "toolnexus";

/// The path of the runtime crate for code generated at this call site.
pub(crate) fn path() -> Path {
    let name = match crate_name(RUNTIME) {
        Ok(FoundCrate::Name(name)) => name,
        // Inside the runtime crate `::toolnexus` resolves through its
        // `extern crate self as toolnexus;`, and its doctests are separate crates that
        // depend on it by name. Without a readable manifest, the conventional name is the
        // best guess.
        Ok(FoundCrate::Itself) | Err(_) => RUNTIME.to_owned(),
    };
    let ident = Ident::new(&name, Span::call_site());
    syn::parse_quote!(::#ident)
}

/// The explicit `crate = "path"` override when given and valid, else [`path`].
pub(crate) fn path_or(explicit: Option<&LitStr>, errors: &mut Errors) -> Path {
    match explicit {
        Some(lit) => match lit.parse::<Path>() {
            Ok(path) => path,
            Err(_) => {
                errors.at(
                    lit,
                    "expected the path of the toolnexus crate, e.g. `crate = \"::toolnexus\"`",
                );
                path()
            }
        },
        None => path(),
    }
}

/// `path` with every token at `span`, so a trait bound failing on a call through it is
/// reported at the user's token that `span` comes from, not at the macro attribute.
///
/// A `$crate` keeps its own span: that span is what makes it name the runtime.
pub(crate) fn at(path: &impl quote::ToTokens, span: Span) -> TokenStream {
    quote::ToTokens::to_token_stream(path)
        .into_iter()
        .map(|mut tt: TokenTree| {
            let is_dollar_crate = matches!(&tt, TokenTree::Ident(i) if i == "$crate");
            if !is_dollar_crate {
                tt.set_span(span);
            }
            tt
        })
        .collect()
}
