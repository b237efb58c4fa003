//! The schemas a tool declares: its input schema (derived by schemars from a generic
//! argument struct, with the checks that put a missing derive at the parameter), the form of
//! its typed answers, and its output schema. Kept apart from the call's code because they
//! are built once per tool, not per call.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use super::bindings::{default_value, elide_lifetimes};
use super::{args, injected};
use crate::runtime;
use crate::tool::parse::{output_value, Role, ToolFn};

/// The input schema, built on first use and then shared by every call and every toolkit;
/// `#[arg(default = ..)]` values are shown in it.
pub(super) fn input_schema(model: &ToolFn) -> TokenStream {
    let krate = &model.krate;
    let value = quote!(#krate::__private::serde_json::Value);
    let defaults = model.params.iter().filter_map(|p| {
        let Role::Arg {
            name,
            default: Some(default),
            ..
        } = &p.role
        else {
            return None;
        };
        let default = default_value(p, default);
        let krate = runtime::at(krate, default.span());
        Some(quote!((#name, #krate::__private::default_json(&#default))))
    });
    let args = args_type(model);
    quote! {
        static __TOOLNEXUS_SCHEMA: ::std::sync::OnceLock<#value> = ::std::sync::OnceLock::new();
        __TOOLNEXUS_SCHEMA.get_or_init(|| {
            #[allow(unused_imports)]
            use #krate::__private::{PickArgsSchema as _, PickNoArgsSchema as _};
            (&&#krate::__private::ArgsSchema::<#args>::new())
                .__toolnexus_schema(&[#(#defaults),*])
        })
    }
}

/// One type parameter of the argument struct per schema property, so that the struct and
/// its derived schema never name the user's types themselves (see [`param_checks`]).
fn args_generics(model: &ToolFn) -> Vec<syn::Ident> {
    (0..args(model).count())
        .map(|i| quote::format_ident!("__ToolnexusP{i}"))
        .collect()
}

/// `__ToolnexusArgs<T0, T1, …>`: the argument struct at the parameters' types.
fn args_type(model: &ToolFn) -> TokenStream {
    let types: Vec<&syn::Type> = args(model).map(|p| &p.ty).collect();
    if types.is_empty() {
        quote!(__ToolnexusArgs)
    } else {
        quote!(__ToolnexusArgs<#(#types),*>)
    }
}

/// One check per schema property, spanned at its type, that the type can be decoded and
/// described. It is the only place the build requires this: the argument struct is
/// generic, and decoding and the schema pick a stand-in for a type that fails, so a
/// missing derive is one error at the parameter. The trait is local so that its advice
/// names the runtime as this crate reaches it, and the bound is not followed into the
/// runtime's sources (`do_not_recommend`), which would list every type with a schema.
pub(super) fn param_checks(model: &ToolFn) -> Option<TokenStream> {
    let mut checks = args(model)
        .map(|p| {
            let ty = &p.ty;
            quote_spanned!(ty.span()=> parameter_must_be_decodable::<#ty>();)
        })
        .peekable();
    checks.peek()?;
    let krate = &model.krate;
    let shown = path_string(krate);
    let shown = shown.trim_start_matches("::");
    let message = "`{Self}` cannot be a tool parameter: it must implement `serde::Deserialize` \
                   and `schemars::JsonSchema`";
    let label = "the model's arguments are decoded into this type, and its schema is \
                 declared to the model";
    let derive = format!(
        "derive both through {shown}'s re-exports, which compile without serde or schemars \
         of your own: `#[derive({shown}::serde::Deserialize, {shown}::schemars::JsonSchema)]` \
         `#[serde(crate = \"{shown}::serde\")]` `#[schemars(crate = \"{shown}::schemars\")]`"
    );
    let injected = "a parameter the runtime fills instead is `Option<&Answer>`, \
                    `Option<Answered<T>>`, `&ToolContext` or `Ext<T>` (an alias of the first \
                    three is marked `#[answer]` / `#[context]`)";
    Some(quote! {
        #[diagnostic::on_unimplemented(
            message = #message,
            label = #label,
            note = #derive,
            note = #injected
        )]
        trait DeserializeAndJsonSchema {}
        #[diagnostic::do_not_recommend]
        impl<T: #krate::__private::serde::de::DeserializeOwned + #krate::__private::schemars::JsonSchema>
            DeserializeAndJsonSchema for T {}
        fn parameter_must_be_decodable<T: DeserializeAndJsonSchema>() {}
        #[allow(dead_code)]
        fn __toolnexus_params() {
            #(#checks)*
        }
    })
}

/// `Tool::answer_schema`, for a tool with injected parameters: the form of its typed
/// answers, known from the first parameter type that has one
/// (`FromCallParts::answer_form`), built once.
pub(super) fn answer_schema(model: &ToolFn) -> Option<TokenStream> {
    let krate = &model.krate;
    let forms: Vec<TokenStream> = injected(model)
        .map(|p| {
            let ty = elide_lifetimes(&p.ty);
            let krate = runtime::at(krate, p.ty.span());
            quote_spanned! {p.ty.span()=>
                let __toolnexus_form = __toolnexus_form.or_else(|| {
                    (&&#krate::__private::FormProbe::<#ty>::new()).__toolnexus_form()
                });
            }
        })
        .collect();
    if forms.is_empty() {
        return None;
    }
    let value = quote!(#krate::__private::serde_json::Value);
    Some(quote! {
        fn answer_schema(
            &self,
        ) -> ::core::option::Option<::core::result::Result<&#value, &str>> {
            static __TOOLNEXUS_FORM: ::std::sync::OnceLock<
                ::core::option::Option<::core::result::Result<#value, ::std::string::String>>,
            > = ::std::sync::OnceLock::new();
            __TOOLNEXUS_FORM
                .get_or_init(|| {
                    #[allow(unused_imports)]
                    use #krate::__private::{PickForm as _, PickNoForm as _};
                    let __toolnexus_form = ::core::option::Option::None;
                    #(#forms)*
                    __toolnexus_form
                })
                .as_ref()
                .map(|__toolnexus_form| {
                    __toolnexus_form.as_ref().map_err(::std::string::String::as_str)
                })
        }
    })
}

/// `Tool::output_schema`, for `#[tool(output_schema)]`: the schema of the returned value.
pub(super) fn output_schema(model: &ToolFn) -> Option<TokenStream> {
    model.output_schema?;
    let ty = output_value(&model.output)?;
    let krate = &model.krate;
    let value = quote!(#krate::__private::serde_json::Value);
    let krate_at_ty = runtime::at(krate, ty.span());
    let schema = quote_spanned!(ty.span()=> || #krate_at_ty::__private::output_schema::<#ty>());
    // The closure is there to carry the type's span; clippy would fold it away.
    Some(quote! {
        #[allow(clippy::redundant_closure)]
        fn output_schema(&self) -> ::core::option::Option<&#value> {
            static __TOOLNEXUS_OUTPUT: ::std::sync::OnceLock<#value> = ::std::sync::OnceLock::new();
            ::core::option::Option::Some(__TOOLNEXUS_OUTPUT.get_or_init(#schema))
        }
    })
}

/// The struct schemars derives the input schema from: one field per schema property, in
/// parameter order, carrying the parameter's `#[schemars(...)]` attributes. Its field
/// types are type parameters, filled in with the user's types only where the schema is
/// built ([`input_schema`]), so a type without a schema is reported by [`param_checks`]
/// alone, at the parameter.
pub(super) fn args_struct(model: &ToolFn) -> TokenStream {
    let krate = &model.krate;
    let schemars_path = format!("{}::__private::schemars", path_string(krate));
    let generics = args_generics(model);
    let fields = args(model).zip(&generics).filter_map(|(p, generic)| {
        let Role::Arg {
            name, description, ..
        } = &p.role
        else {
            return None;
        };
        let ident = &p.ident;
        let doc = description.as_ref().map(|d| quote!(#[doc = #d]));
        let schemars = &p.attrs.schemars;
        Some(quote_spanned! {p.ty.span()=>
            #doc
            #(#schemars)*
            #[schemars(rename = #name)]
            #ident: #generic
        })
    });
    let generics = (!generics.is_empty()).then(|| quote!(<#(#generics),*>));
    quote! {
        #[derive(#krate::__private::schemars::JsonSchema)]
        #[schemars(crate = #schemars_path)]
        #[allow(dead_code, non_camel_case_types, non_snake_case)]
        struct __ToolnexusArgs #generics {
            #(#fields,)*
        }
    }
}

/// `::toolnexus` as text, for the `crate = "…"` options of derives.
fn path_string(path: &syn::Path) -> String {
    quote!(#path).to_string().replace(' ', "")
}
