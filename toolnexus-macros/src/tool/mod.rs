//! `#[tool]`: read the fn into a small model ([`parse`]), check it ([`check`]), then
//! generate ([`expand`]). `#[toolbox]` reads and checks each of its `#[tool]` methods the
//! same way.

mod check;
mod expand;
mod parse;

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::{FnArg, ImplItemFn, ItemFn, Path};

use crate::attr::ToolOptions;
use crate::diag::Errors;
use crate::runtime;
pub(crate) use expand::{items, struct_path, stub};
use parse::FnParts;
pub(crate) use parse::{is_runtime_prefix, Owner, ToolFn};

pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut func = match syn::parse2::<ItemFn>(item.clone()) {
        Ok(func) => func,
        Err(_) => {
            let error = syn::Error::new(
                Span::call_site(),
                "#[tool] goes on a fn (`async` or not); for methods sharing a value, put \
                 `#[toolbox]` on their impl block",
            )
            .into_compile_error();
            return quote!(#error #item);
        }
    };
    let mut errors = Errors::default();
    let options = ToolOptions::parse(attr, &mut errors);
    let krate = runtime::path_or(options.krate.as_ref(), &mut errors);
    let parts = FnParts {
        attrs: &func.attrs,
        vis: &func.vis,
        sig: &mut func.sig,
    };
    let model = ToolFn::read(parts, Owner::Free, &options, krate, &mut errors);
    check::tool(&model, &func.sig, &mut errors);
    match errors.finish(()) {
        Ok(()) => expand::tool(&func, &model),
        Err(error) => {
            let error = error.into_compile_error();
            // Keep the fn (IDEs and the rest of the crate still see it) and, outside impl
            // blocks, a stand-in struct so its uses do not add errors of their own.
            let in_impl = func
                .sig
                .inputs
                .iter()
                .any(|i| matches!(i, FnArg::Receiver(_)));
            let stub = (!in_impl).then(|| expand::stub(&model));
            quote!(#error #func #stub)
        }
    }
}

/// Reads a `#[tool(...)]` method of a `#[toolbox]` impl (`attr` is what the parentheses
/// hold), removing the helper attributes from its parameters. The toolbox's `crate` path
/// applies unless the method sets its own.
pub(crate) fn read_method(
    attr: TokenStream,
    method: &mut ImplItemFn,
    owner: Owner,
    toolbox_krate: &Path,
    errors: &mut Errors,
) -> ToolFn {
    let options = ToolOptions::parse(attr, errors);
    let krate = match &options.krate {
        Some(_) => runtime::path_or(options.krate.as_ref(), errors),
        None => toolbox_krate.clone(),
    };
    let parts = FnParts {
        attrs: &method.attrs,
        vis: &method.vis,
        sig: &mut method.sig,
    };
    let model = ToolFn::read(parts, owner, &options, krate, errors);
    check::tool(&model, &method.sig, errors);
    model
}

/// Every identifier in `tokens`, at any depth: what tests of generated code look for.
#[cfg(test)]
pub(crate) fn idents(tokens: TokenStream, out: &mut Vec<String>) {
    for tt in tokens {
        match tt {
            proc_macro2::TokenTree::Ident(i) => out.push(i.to_string()),
            proc_macro2::TokenTree::Group(g) => idents(g.stream(), out),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::idents;
    use quote::quote;

    #[test]
    fn generated_code_reaches_the_runtime_only_through_its_path() {
        let out = super::expand(
            quote!(
                crate = "::tn",
                approval(prompt = "Ship {item}?", when = item.is_empty())
            ),
            quote! {
                /// Ships
                async fn ship(
                    item: String,
                    answer: Option<&tn::Answer>,
                    ctx: &ToolContext,
                    typed: Option<Answered<Form>>,
                    #[answer] marked: Alias,
                    #[context] context: Ctx,
                ) -> ToolResult {
                    todo()
                }
            },
        );
        let mut names = Vec::new();
        idents(out, &mut names);
        assert!(names.iter().any(|n| n == "tn"));
        assert!(names.iter().any(|n| n == "approval"), "{names:?}");
        assert!(!names.iter().any(|n| n == "toolnexus"), "{names:?}");
        assert!(!names.iter().any(|n| n == "compile_error"), "{names:?}");
    }
}
