//! `#[tool]`: read the fn into a small model ([`parse`]), then generate ([`expand`]).

mod expand;
mod parse;

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::{FnArg, ItemFn};

use crate::attr::ToolOptions;
use crate::diag::Errors;
use crate::runtime;
use parse::ToolFn;

pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut func = match syn::parse2::<ItemFn>(item.clone()) {
        Ok(func) => func,
        Err(_) => {
            let error = syn::Error::new(
                Span::call_site(),
                "#[tool] goes on an `async fn`; for methods sharing a value, put `#[toolbox]` \
                 on their impl block",
            )
            .into_compile_error();
            return quote!(#error #item);
        }
    };
    let mut errors = Errors::default();
    let options = ToolOptions::parse(attr, &mut errors);
    let krate = runtime::path_or(options.krate.as_ref(), &mut errors);
    let model = ToolFn::read(&mut func, &options, krate, &mut errors);
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

#[cfg(test)]
mod tests {
    use proc_macro2::TokenTree;
    use quote::quote;

    fn idents(tokens: proc_macro2::TokenStream, out: &mut Vec<String>) {
        for tt in tokens {
            match tt {
                TokenTree::Ident(i) => out.push(i.to_string()),
                TokenTree::Group(g) => idents(g.stream(), out),
                _ => {}
            }
        }
    }

    #[test]
    fn generated_code_reaches_the_runtime_only_through_its_path() {
        let out = super::expand(
            quote!(crate = "::tn"),
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
        assert!(!names.iter().any(|n| n == "toolnexus"), "{names:?}");
        assert!(!names.iter().any(|n| n == "compile_error"), "{names:?}");
    }
}
