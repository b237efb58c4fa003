//! `#[toolbox]`: the `#[tool]` methods of an inherent impl become tools sharing the value.
//!
//! Attribute macros expand outside-in, so `#[toolbox]` receives the impl with the
//! `#[tool]` attributes of its methods still on. It reads each such method into the model
//! `#[tool]` uses (same rules, same generated code) and removes the attribute, so the `tool`
//! macro itself only ever sees methods outside a toolbox, which it rejects.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Attribute, Ident, ImplItem, ItemImpl, Meta, Path, Type};

use crate::attr::ToolboxOptions;
use crate::diag::Errors;
use crate::runtime;
use crate::tool::{self, is_runtime_prefix, Owner, ToolFn};

pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut block = match syn::parse2::<ItemImpl>(item.clone()) {
        Ok(block) => block,
        Err(_) => {
            let error = syn::Error::new(
                Span::call_site(),
                "#[toolbox] goes on an impl block whose `#[tool]` methods share the value: \
                 `#[toolbox] impl Shop { … }`",
            )
            .into_compile_error();
            return quote!(#error #item);
        }
    };
    let mut errors = Errors::default();
    let options = ToolboxOptions::parse(attr, &mut errors);
    let krate = runtime::path_or(options.krate.as_ref(), &mut errors);
    let usable = check_impl(&block, &mut errors);
    let self_ident = self_ident(&block.self_ty, &mut errors);

    let mut models = Vec::new();
    for item in &mut block.items {
        let ImplItem::Fn(method) = item else {
            continue;
        };
        let Some(attr) = take_tool_attr(&mut method.attrs, &krate, &mut errors) else {
            continue;
        };
        let owner = Owner::Toolbox {
            self_ty: block.self_ty.clone(),
            self_ident: self_ident.clone(),
            takes_self: false,
        };
        models.push(tool::read_method(attr, method, owner, &krate, &mut errors));
    }
    // An impl that cannot hold tools has already been told why.
    if models.is_empty() && usable {
        errors.at(
            &block.self_ty,
            "this #[toolbox] has no tools: mark each method that should become one with \
             `#[tool]` (an impl without tool methods needs no `#[toolbox]`)",
        );
    }
    check_unique_names(&models, &mut errors);

    match errors.finish(()) {
        Ok(()) => {
            let tools = models.iter().map(tool::items);
            let toolbox = toolbox_impl(&block.self_ty, &krate, &models);
            quote! {
                #block
                #(#tools)*
                #toolbox
            }
        }
        Err(error) => {
            let error = error.into_compile_error();
            // Keep the impl, and for a usable impl the generated items as stand-ins, so
            // that uses of them do not add errors of their own.
            let stubs = usable.then(|| {
                let tools = models.iter().map(tool::stub);
                let toolbox = toolbox_stub(&block.self_ty, &krate);
                quote!(#(#tools)* #toolbox)
            });
            quote!(#error #block #stubs)
        }
    }
}

/// Records why the impl cannot hold tools; `false` when it cannot.
fn check_impl(block: &ItemImpl, errors: &mut Errors) -> bool {
    let mut usable = true;
    if let Some((_, path, _)) = &block.trait_ {
        errors.at(
            path,
            "#[toolbox] goes on an inherent impl (`impl Shop { … }`), not on a trait impl: \
             move the `#[tool]` methods to an impl of the type itself",
        );
        usable = false;
    }
    if !block.generics.params.is_empty() {
        errors.at(
            &block.generics.params,
            "#[toolbox] cannot be on a generic impl: each tool is a concrete type shared \
             across threads; put it on an impl for a concrete type, e.g. `impl Store<Postgres>`",
        );
        usable = false;
    } else if let Some(clause) = &block.generics.where_clause {
        errors.at(
            clause,
            "#[toolbox] cannot be on an impl with a `where` clause",
        );
        usable = false;
    }
    usable
}

/// The type's own name (`Shop` of `crate::Shop<u8>`), which prefixes the tool structs.
fn self_ident(self_ty: &Type, errors: &mut Errors) -> Ident {
    if let Type::Path(p) = self_ty {
        if let (None, Some(last)) = (&p.qself, p.path.segments.last()) {
            return last.ident.clone();
        }
    }
    errors.at(
        self_ty,
        "#[toolbox] goes on an impl of a named type (`impl Shop { … }`), whose name prefixes \
         the generated tool structs",
    );
    Ident::new("__ToolnexusToolbox", self_ty.span())
}

/// Removes the method's `#[tool]` / `#[tool(...)]` and returns what its parentheses hold;
/// `None` for a method that is not a tool.
fn take_tool_attr(
    attrs: &mut Vec<Attribute>,
    krate: &Path,
    errors: &mut Errors,
) -> Option<TokenStream> {
    let is_tool = |attr: &Attribute| {
        let path = attr.path();
        path.segments.last().is_some_and(|s| s.ident == "tool") && is_runtime_prefix(path, krate)
    };
    let mut found = None;
    for attr in attrs.iter().filter(|a| is_tool(a)) {
        let tokens = match &attr.meta {
            Meta::Path(_) => TokenStream::new(),
            Meta::List(list) => list.tokens.clone(),
            Meta::NameValue(_) => {
                errors.at(
                    attr,
                    "expected `#[tool]` or `#[tool(name = \"...\", description = \"...\")]`",
                );
                TokenStream::new()
            }
        };
        if found.is_some() {
            errors.at(attr, "this method is already marked `#[tool]`");
        } else {
            found = Some(tokens);
        }
    }
    attrs.retain(|a| !is_tool(a));
    found
}

/// Two tools of one box under one name would make every toolkit holding them fail to
/// build; say so here, at the second one.
fn check_unique_names(models: &[ToolFn], errors: &mut Errors) {
    for (i, model) in models.iter().enumerate() {
        if let Some(first) = models[..i].iter().find(|m| m.name == model.name) {
            errors.at(
                &model.fn_ident,
                format_args!(
                    "`{}` is also the name of the tool of `fn {}`: give one of them another \
                     with `#[tool(name = \"...\")]`",
                    model.name, first.fn_ident
                ),
            );
        }
    }
}

/// `impl Toolbox`: one tool per `#[tool]` method, in the order written, each holding a
/// clone of the `Arc`. Spanned at the type, so a value that is not `Send + Sync + 'static`
/// is reported there.
fn toolbox_impl(self_ty: &Type, krate: &Path, models: &[ToolFn]) -> TokenStream {
    let structs = models.iter().map(tool::struct_path);
    let arc_tool = quote!(::std::sync::Arc<dyn #krate::Tool>);
    let krate_at_ty = runtime::at(krate, self_ty.span());
    let head = quote_spanned!(self_ty.span()=> impl #krate_at_ty::Toolbox for #self_ty);
    quote! {
        #[automatically_derived]
        #head {
            fn into_tools(self: ::std::sync::Arc<Self>) -> ::std::vec::Vec<#arc_tool> {
                ::std::vec![
                    #(::std::sync::Arc::new(#structs::new(::std::sync::Arc::clone(&self))) as #arc_tool),*
                ]
            }
        }
    }
}

fn toolbox_stub(self_ty: &Type, krate: &Path) -> TokenStream {
    quote! {
        #[automatically_derived]
        impl #krate::Toolbox for #self_ty {
            fn into_tools(
                self: ::std::sync::Arc<Self>,
            ) -> ::std::vec::Vec<::std::sync::Arc<dyn #krate::Tool>> {
                ::core::unreachable!()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::tool::idents;
    use quote::quote;

    #[test]
    fn tool_attributes_are_taken_over_and_the_runtime_reached_through_its_path() {
        let out = super::expand(
            quote!(crate = "::tn"),
            quote! {
                impl Shop {
                    /// Stock
                    #[tool]
                    async fn stock(&self, sku: String, answer: Option<&tn::Answer>) -> String {
                        sku
                    }

                    /// Reserve
                    #[tn::tool(name = "book")]
                    async fn reserve(&self, #[arg(description = "Item")] sku: String) -> String {
                        sku
                    }

                    #[inline]
                    fn helper(&self) {}
                }
            },
        );
        let mut names = Vec::new();
        idents(out, &mut names);
        assert!(names.iter().any(|n| n == "tn"));
        assert!(!names.iter().any(|n| n == "toolnexus"), "{names:?}");
        assert!(!names.iter().any(|n| n == "compile_error"), "{names:?}");
        assert!(
            !names.iter().any(|n| n == "tool" || n == "arg"),
            "{names:?}"
        );
        assert!(names.iter().any(|n| n == "ShopStock"));
        assert!(names.iter().any(|n| n == "ShopReserve"));
        assert!(names.iter().any(|n| n == "inline"), "other attributes stay");
    }

    #[test]
    fn a_tool_attribute_under_another_path_is_left_alone() {
        let mut method: syn::ImplItemFn = syn::parse_quote! {
            #[other_crate::tool(name = "theirs")]
            #[toolnexus::tool]
            async fn stock(&self) -> String { String::new() }
        };
        let krate: syn::Path = syn::parse_quote!(::toolnexus);
        let mut errors = crate::diag::Errors::default();
        let taken = super::take_tool_attr(&mut method.attrs, &krate, &mut errors);
        assert!(taken.is_some(), "the runtime's `tool` is taken");
        assert!(errors.finish(()).is_ok());
        let left: Vec<String> = method
            .attrs
            .iter()
            .map(|a| quote::ToTokens::to_token_stream(a.path()).to_string())
            .collect();
        assert_eq!(left, ["other_crate :: tool"]);
    }
}
