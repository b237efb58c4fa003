//! `Tool::execute`'s body: each parameter decoded from the call's arguments or filled in by
//! the runtime, the user's fn called, and what it returns turned into a `ToolResult`. The
//! approval decodes the arguments the same way, so the bindings are shared from here.

use proc_macro2::{Group, Span, TokenStream, TokenTree};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Expr, Lit, ReturnType};

use super::{args, injected};
use crate::runtime;
use crate::tool::parse::{Owner, Param, Role, ToolFn};

/// Decode every argument (a failure returns an error result naming the tool and the
/// field), bind the injected values, call the user's fn and convert what it returns.
pub(super) fn execute_body(model: &ToolFn) -> TokenStream {
    let krate = &model.krate;
    let args_binding = if args(model).next().is_some() {
        quote!(let mut __toolnexus_args)
    } else {
        quote!(let __toolnexus_args)
    };
    let parts = call_parts(model);
    let refused =
        quote!(::core::result::Result::Err(__toolnexus_error) => return __toolnexus_error);
    let bindings = model.params.iter().map(|p| binding(krate, p, &refused));
    let (shared, callee) = callee(model);
    let call = call(model, callee);
    let result = conversion(model);
    quote! {
        #[allow(unused_imports)]
        use #krate::__private::{
            PickDecode as _, PickInto as _, PickJson as _, PickNoDecode as _, PickNothing as _,
            PickResultJson as _,
        };
        let __toolnexus_ctx = __toolnexus_ctx;
        #args_binding = match #krate::__private::Args::new(__TOOLNEXUS_NAME, __toolnexus_args) {
            ::core::result::Result::Ok(__toolnexus_args) => __toolnexus_args,
            ::core::result::Result::Err(__toolnexus_error) => return __toolnexus_error,
        };
        #shared
        #parts
        #(#bindings)*
        let __toolnexus_output = #call;
        #result
    }
}

/// What the injected parameters are taken from, when there are any: the call's context
/// and the tool's answer form, looked up once.
fn call_parts(model: &ToolFn) -> Option<TokenStream> {
    injected(model).next()?;
    let krate = &model.krate;
    Some(quote! {
        let __toolnexus_parts = #krate::__private::CallParts {
            tool_name: __TOOLNEXUS_NAME,
            ctx: &__toolnexus_ctx,
            form: #krate::Tool::answer_schema(self),
        };
    })
}

/// The call of the user's fn, spanned at its signature, and for a method taking `&self` the
/// statement that first takes the shared value out of the struct.
fn callee(model: &ToolFn) -> (Option<TokenStream>, TokenStream) {
    let krate = &model.krate;
    let fn_ident = &model.fn_ident;
    let call_args = model.params.iter().map(|p| {
        let ident = &p.ident;
        quote_spanned!(p.ty.span()=> #ident)
    });
    match &model.owner {
        Owner::Free => (
            None,
            quote_spanned!(model.sig_span=> #fn_ident(#(#call_args),*)),
        ),
        Owner::Toolbox {
            self_ty,
            takes_self: true,
            ..
        } => {
            let refused = quote! {
                return #krate::ToolResult::error(::std::format!(
                    "{}: the tool does not hold a `{}`",
                    __TOOLNEXUS_NAME,
                    ::core::any::type_name::<#self_ty>()
                ))
            };
            let shared = shared_value(self_ty, &quote!(__toolnexus_self), &refused);
            let callee = quote_spanned! {model.sig_span=>
                <#self_ty>::#fn_ident(__toolnexus_self, #(#call_args),*)
            };
            (Some(shared), callee)
        }
        Owner::Toolbox { self_ty, .. } => (
            None,
            quote_spanned!(model.sig_span=> <#self_ty>::#fn_ident(#(#call_args),*)),
        ),
    }
}

/// `let BINDING = <the value the struct shares>;`, or `refused` (which returns) when it
/// holds none of type `self_ty`. Only `new` fills the field, always with a `self_ty`; a
/// value of another type (put there by hand through the hidden field) is refused, not a
/// panic.
pub(super) fn shared_value(
    self_ty: &syn::Type,
    binding: &TokenStream,
    refused: &TokenStream,
) -> TokenStream {
    quote! {
        let ::core::option::Option::Some(#binding) = self.0.downcast_ref::<#self_ty>() else {
            #refused;
        };
    }
}

/// The callee awaited, for an `async fn`, through the check that its future is `Send`;
/// spanned at the fn, so a body that holds something not `Send` across an `.await` is
/// reported there rather than at the `#[tool]` attribute. A plain fn is just called.
fn call(model: &ToolFn, callee: TokenStream) -> TokenStream {
    if !model.is_async {
        return callee;
    }
    let krate_at_fn = runtime::at(&model.krate, model.sig_span);
    quote_spanned! {model.sig_span=>
        #krate_at_fn::__private::tool_future_must_be_send(#callee).await
    }
}

/// `__toolnexus_output` as a `ToolResult`, with the answer form given to a suspension that
/// asks without one.
fn conversion(model: &ToolFn) -> TokenStream {
    let output_span = match &model.output {
        ReturnType::Type(_, ty) => ty.span(),
        ReturnType::Default => model.sig_span,
    };
    let krate_at_output = runtime::at(&model.krate, output_span);
    // Only the return type's span on the conversion, so "cannot be returned from a tool"
    // underlines exactly that type.
    let result = quote_spanned! {output_span=>
        (&&&&#krate_at_output::__private::Ret::of(&__toolnexus_output))
            .__toolnexus_kind()
            .convert(__toolnexus_output)
    };
    if injected(model).next().is_none() {
        return result;
    }
    let krate = &model.krate;
    quote! {
        #krate::__private::attach_form(#result, __toolnexus_parts.form)
    }
}

/// One `let` per parameter, spanned at the user's parameter type. An injected value goes
/// through the runtime's `FromCallParts`, by way of the trait of what the parameter is
/// meant to receive, so the parameter's type decides what is filled in, and a type that
/// merely shares a name (a user's own `Answer`) is a trait error on that parameter that
/// says where the value goes, never a silently wrong value.
///
/// `refused` is the match arm for a value that cannot be had, binding
/// `__toolnexus_error` (the error result) if it needs it.
pub(super) fn binding(krate: &syn::Path, param: &Param, refused: &TokenStream) -> TokenStream {
    let ident = &param.ident;
    let ty = &param.ty;
    let span: Span = ty.span();
    let krate = runtime::at(krate, span);
    let (ty, value) = match &param.role {
        Role::Arg {
            name,
            default: None,
            ..
        } => (
            quote!(#ty),
            quote_spanned! {span=>
                (&&#krate::__private::Decode::<#ty>::new())
                    .__toolnexus_take(&mut __toolnexus_args, #name)
            },
        ),
        Role::Arg {
            name,
            default: Some(default),
            ..
        } => {
            let default = default_value(param, default);
            (
                quote!(#ty),
                quote_spanned! {span=>
                    (&&#krate::__private::Decode::<#ty>::new())
                        .__toolnexus_take_or(&mut __toolnexus_args, #name, || #default)
                },
            )
        }
        Role::Injected(intent) => {
            let binder = syn::Ident::new(intent.binder(), span);
            (
                elide_lifetimes(ty),
                quote_spanned!(span=> #krate::__private::#binder::inject(&__toolnexus_parts)),
            )
        }
    };
    quote_spanned! {span=>
        let #ident: #ty = match #value {
            ::core::result::Result::Ok(__toolnexus_value) => __toolnexus_value,
            #refused,
        };
    }
}

/// `{ let v: T = EXPR; v }`, spanned at the user's expression so a type mismatch lands
/// there. A string literal goes through `From`, so `default = "metric"` works for `String`.
pub(super) fn default_value(param: &Param, default: &Expr) -> TokenStream {
    let ty = &param.ty;
    let value = match default {
        Expr::Lit(lit) if matches!(lit.lit, Lit::Str(_)) => {
            quote_spanned!(default.span()=> ::core::convert::From::from(#default))
        }
        _ => quote!(#default),
    };
    quote_spanned!(default.span()=> { let __toolnexus_default: #ty = #value; __toolnexus_default })
}

/// `ty` with every named lifetime written `'_`: the fn's own lifetime parameters
/// (`Option<&'a Answer>`) do not exist in the generated body, where the borrow is inferred.
pub(super) fn elide_lifetimes(ty: &syn::Type) -> TokenStream {
    fn walk(tokens: TokenStream) -> TokenStream {
        let mut out = TokenStream::new();
        let mut iter = tokens.into_iter().peekable();
        while let Some(tt) = iter.next() {
            match tt {
                TokenTree::Punct(p) if p.as_char() == '\'' => {
                    if let Some(TokenTree::Ident(name)) = iter.peek() {
                        let span = name.span();
                        iter.next();
                        let elided = syn::Lifetime::new("'_", span);
                        out.extend(quote::ToTokens::into_token_stream(elided));
                    } else {
                        out.extend([TokenTree::Punct(p)]);
                    }
                }
                TokenTree::Group(g) => {
                    let mut group = Group::new(g.delimiter(), walk(g.stream()));
                    group.set_span(g.span());
                    out.extend([TokenTree::Group(group)]);
                }
                other => out.extend([other]),
            }
        }
        out
    }
    walk(quote::ToTokens::to_token_stream(ty))
}

#[cfg(test)]
mod tests {
    #[test]
    fn named_lifetimes_are_elided() {
        let ty: syn::Type = syn::parse_quote!(Option<&'a ::toolnexus::Answer>);
        let elided = super::elide_lifetimes(&ty).to_string();
        assert_eq!(elided.replace(' ', ""), "Option<&'_::toolnexus::Answer>");
    }
}
