//! The code `#[tool]` generates: a struct implementing `Tool` (a unit struct for a free fn,
//! one holding the shared value for a `#[toolbox]` method), whose hidden helpers (the
//! argument struct schemars derives the schema from, the tool's name) live inside a
//! `const _: () = { … };` so they never clash with the user's items.
//!
//! The struct itself is defined in a hidden module and brought in by a glob import. An item
//! of the user's with the same name shadows a glob import without an error, so a name
//! already taken is caught by a check of ours, whose message says to set `struct_name`,
//! rather than by the compiler's "defined multiple times" and a cascade of derive errors.

use proc_macro2::{Group, Span, TokenStream, TokenTree};
use quote::{quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Expr, ItemFn, Lit, LitStr, ReturnType};

use super::parse::{output_value, rename_self, Owner, Param, Role, ToolFn};
use crate::attr::{ApprovalOption, EditsOption};
use crate::runtime;
use crate::template::Template;

/// The user's fn (helper attributes removed), the tool struct and its `Tool` impl.
pub(crate) fn tool(func: &ItemFn, model: &ToolFn) -> TokenStream {
    let items = items(model);
    quote!(#func #items)
}

/// The tool struct and its `Tool` impl.
pub(crate) fn items(model: &ToolFn) -> TokenStream {
    let krate = &model.krate;
    let struct_path = struct_path(model);
    let struct_def = struct_def(model);
    let name_check = name_check(model);
    let param_checks = param_checks(model);
    let description = &model.description;
    let name = &model.name;
    let args_struct = args_struct(model);
    let input_schema = input_schema(model);
    let answer_schema = answer_schema(model);
    let output_schema = output_schema(model);
    let approval = approval(model);
    let execute_body = execute_body(model);
    let value = quote!(#krate::__private::serde_json::Value);
    quote! {
        #struct_def

        const _: () = {
            const __TOOLNEXUS_NAME: &str = #name;

            #name_check

            #param_checks

            #[automatically_derived]
            impl #krate::Tool for #struct_path {
                fn name(&self) -> &str {
                    __TOOLNEXUS_NAME
                }

                fn description(&self) -> &str {
                    #description
                }

                fn input_schema(&self) -> &#value {
                    #input_schema
                }

                #answer_schema

                #output_schema

                #approval

                fn execute(
                    &self,
                    __toolnexus_args: #value,
                    __toolnexus_ctx: #krate::ToolContext,
                ) -> #krate::BoxFuture<'_, #krate::ToolResult> {
                    ::std::boxed::Box::pin(#krate::__private::guard(
                        __TOOLNEXUS_NAME,
                        async move { #execute_body },
                    ))
                }
            }

            #args_struct
        };
    }
}

/// `__toolnexus_tool_f::F`: how generated code names the struct, whatever the glob import
/// resolves to.
pub(crate) fn struct_path(model: &ToolFn) -> TokenStream {
    let module = &model.module_ident;
    let struct_ident = &model.struct_ident;
    quote!(#module::#struct_ident)
}

/// Fails, spanned at the fn's name, when the struct's name resolves to anything but the
/// generated struct: an item of the user's (or an explicit import) with that name shadows
/// the glob import. The trait is local, so its message can name the fn and a fix.
fn name_check(model: &ToolFn) -> TokenStream {
    let struct_ident = &model.struct_ident;
    let struct_path = struct_path(model);
    let span = model.fn_ident.span();
    let message = format!(
        "`{{Self}}` is already a name in this scope, so `#[tool]` cannot give it to the \
         struct it generates for `fn {}`",
        model.fn_ident
    );
    let label = format!(
        "name the generated struct yourself: `#[tool(struct_name = \"{struct_ident}Tool\")]`"
    );
    let check = quote_spanned!(span=> struct_name_must_be_free::<#struct_ident>());
    quote! {
        #[diagnostic::on_unimplemented(message = #message, label = #label)]
        trait __ToolnexusStructName {}
        impl __ToolnexusStructName for #struct_path {}
        fn struct_name_must_be_free<T: __ToolnexusStructName>() {}
        #[allow(dead_code)]
        fn __toolnexus_struct_name() {
            #check;
        }
    }
}

/// The input schema, built on first use and then shared by every call and every toolkit;
/// `#[arg(default = ..)]` values are shown in it.
fn input_schema(model: &ToolFn) -> TokenStream {
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

/// The schema properties: the parameters decoded from the call's arguments.
fn args(model: &ToolFn) -> impl Iterator<Item = &Param> {
    model
        .params
        .iter()
        .filter(|p| matches!(p.role, Role::Arg { .. }))
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
fn param_checks(model: &ToolFn) -> Option<TokenStream> {
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

/// `{ let v: T = EXPR; v }`, spanned at the user's expression so a type mismatch lands
/// there. A string literal goes through `From`, so `default = "metric"` works for `String`.
fn default_value(param: &Param, default: &Expr) -> TokenStream {
    let ty = &param.ty;
    let value = match default {
        Expr::Lit(lit) if matches!(lit.lit, Lit::Str(_)) => {
            quote_spanned!(default.span()=> ::core::convert::From::from(#default))
        }
        _ => quote!(#default),
    };
    quote_spanned!(default.span()=> { let __toolnexus_default: #ty = #value; __toolnexus_default })
}

/// `Tool::answer_schema`, for a tool with injected parameters: the form of its typed
/// answers, known from the first parameter type that has one
/// (`FromCallParts::answer_form`), built once.
fn answer_schema(model: &ToolFn) -> Option<TokenStream> {
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
fn output_schema(model: &ToolFn) -> Option<TokenStream> {
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

/// `Tool::approval`, for `#[tool(approval …)]`. The arguments are decoded as `execute`
/// decodes them; arguments it would refuse ask nothing, since the body never runs on them.
/// Then the condition, which sees the parameters by value, as the body does, and the
/// prompt.
fn approval(model: &ToolFn) -> Option<TokenStream> {
    let approval = model.approval.as_ref()?;
    let krate = &model.krate;
    let value = quote!(#krate::__private::serde_json::Value);
    let none = quote!(::core::option::Option::None);
    let refused = quote!(::core::result::Result::Err(_) => return #none);
    let bindings = args(model).map(|p| binding(krate, p, &refused));
    let condition = condition(model, approval);
    let responders = responders(approval);
    let prompt = match &approval.prompt {
        Some(template) => prompt(model, template),
        None => quote!(#krate::__private::default_prompt(__TOOLNEXUS_NAME, __toolnexus_sent)),
    };
    // Every argument is decoded, so that a call `execute` would refuse asks nothing, though
    // the condition and the prompt may read only some of them (hence unused bindings). A
    // prompt without placeholders still goes through `format!`, for its `{{` escapes, and
    // the shared value is taken out as `execute` takes it, with a `let … else`.
    Some(quote! {
        #[allow(unused_variables, unused_mut, clippy::useless_format, clippy::question_mark)]
        fn approval(
            &self,
            __toolnexus_sent: &#value,
        ) -> ::core::option::Option<::std::string::String> {
            #[allow(unused_imports)]
            use #krate::__private::{
                PickDecode as _, PickDisplay as _, PickNoDecode as _, PickSent as _,
            };
            let mut __toolnexus_args = match #krate::__private::Args::new(
                __TOOLNEXUS_NAME,
                #value::clone(__toolnexus_sent),
            ) {
                ::core::result::Result::Ok(__toolnexus_args) => __toolnexus_args,
                ::core::result::Result::Err(_) => return #none,
            };
            #(#bindings)*
            #condition
            ::core::option::Option::Some(#prompt)
        }

        #responders
    })
}

/// `Tool::approval_responders`: who may answer, as declared (an empty slice for anyone), so
/// a toolkit can put them on the gate's request and tell which gates nobody restricted.
fn responders(approval: &ApprovalOption) -> TokenStream {
    let names = approval.responders.iter().flatten();
    let quorum = approval.quorum.as_ref().map(|n| {
        quote! {
            fn approval_quorum(&self) -> ::core::option::Option<u32> {
                ::core::option::Option::Some(#n)
            }
        }
    });
    let edits = approval.edits.as_ref().map(|edits| {
        let fields = match edits {
            EditsOption::None => Vec::new(),
            EditsOption::Only(fields) => fields.clone(),
        };
        quote! {
            fn approval_edits(&self) -> ::core::option::Option<&[&str]> {
                ::core::option::Option::Some(&[#(#fields),*])
            }
        }
    });
    let rememberable = approval.rememberable.then(|| {
        quote! {
            fn approval_rememberable(&self) -> bool {
                true
            }
        }
    });
    let not_requester = approval.not_requester.then(|| {
        quote! {
            fn approval_not_requester(&self) -> bool {
                true
            }
        }
    });
    quote! {
        fn approval_responders(&self) -> ::core::option::Option<&[&str]> {
            ::core::option::Option::Some(&[#(#names),*])
        }
        #quorum
        #edits
        #rememberable
        #not_requester
    }
}

/// `when = CONDITION`, returning `None` when false. Spanned at the expression, so one that
/// is not a `bool` is reported there. A toolbox method's `self` in it is the shared value,
/// taken out of the struct first.
fn condition(model: &ToolFn, approval: &ApprovalOption) -> Option<TokenStream> {
    let when = approval.when.as_ref()?;
    let self_span = model
        .receiver
        .as_ref()
        .map_or_else(Span::call_site, |r| r.self_token.span);
    let self_binding = syn::Ident::new("__toolnexus_self", self_span);
    let (expr, reads_self) =
        rename_self(quote::ToTokens::to_token_stream(when), "__toolnexus_self");
    let none = quote!(return ::core::option::Option::None);
    let shared = match (&model.owner, reads_self) {
        (
            Owner::Toolbox {
                self_ty,
                takes_self: true,
                ..
            },
            Some(_),
        ) => Some(shared_value(self_ty, &quote!(#self_binding), &none)),
        _ => None,
    };
    let krate = &model.krate;
    let unknown = injected(model).map(|p| {
        let ident = &p.ident;
        quote!(let #ident = #krate::__private::NotKnownUntilApproved;)
    });
    let krate_at_when = runtime::at(krate, when.span());
    let test = quote_spanned! {when.span()=>
        let __toolnexus_when = #krate_at_when::__private::condition(#expr);
    };
    Some(quote! {
        #shared
        #(#unknown)*
        #test
        if !__toolnexus_when {
            #none;
        }
    })
}

/// The prompt's `format!`, spanned at the literal so a spec it rejects is reported there;
/// each placeholder is a parameter, shown by `Shown`.
fn prompt(model: &ToolFn, template: &Template) -> TokenStream {
    let krate = &model.krate;
    let format = LitStr::new(&template.format, template.lit.span());
    // The checks made sure every name is an argument's.
    let values = template.names.iter().filter_map(|name| {
        let param = args(model).find(|p| p.ident.unraw() == name)?;
        let Role::Arg { name: wire, .. } = &param.role else {
            return None;
        };
        let ident = &param.ident;
        Some(quote! {
            (&&#krate::__private::Shown::new(&#ident, __toolnexus_sent.get(#wire)))
                .__toolnexus_shown()
        })
    });
    quote_spanned!(template.lit.span()=> ::std::format!(#format #(, #values)*))
}

/// What is emitted next to the errors of a fn that could not become a tool: the struct
/// with an impl that is never run (the crate does not compile), so uses of the struct
/// elsewhere do not add "cannot find" errors to the real ones.
pub(crate) fn stub(model: &ToolFn) -> TokenStream {
    let krate = &model.krate;
    let struct_path = struct_path(model);
    let struct_def = struct_def(model);
    let name = &model.name;
    quote! {
        #struct_def

        #[automatically_derived]
        impl #krate::Tool for #struct_path {
            fn name(&self) -> &str {
                #name
            }
            fn description(&self) -> &str {
                ""
            }
            fn input_schema(&self) -> &#krate::__private::serde_json::Value {
                ::core::unreachable!()
            }
            fn execute(
                &self,
                _: #krate::__private::serde_json::Value,
                _: #krate::ToolContext,
            ) -> #krate::BoxFuture<'_, #krate::ToolResult> {
                ::core::unreachable!()
            }
        }
    }
}

/// The hidden module with the struct, the glob import that names it in the user's scope,
/// and, for a toolbox method, the struct's constructor and its `Clone` and `Debug`.
fn struct_def(model: &ToolFn) -> TokenStream {
    let vis = &model.vis;
    let module = &model.module_ident;
    let struct_ident = &model.struct_ident;
    let docs = struct_docs(model);
    // `pub` inside the private module; the glob import gives it the fn's visibility.
    let import = quote! {
        #[allow(unused_imports)]
        #vis use #module::*;
    };
    let Owner::Toolbox { self_ty, .. } = &model.owner else {
        return quote! {
            #[allow(non_snake_case)]
            mod #module {
                #docs
                #[derive(
                    ::core::clone::Clone,
                    ::core::marker::Copy,
                    ::core::fmt::Debug,
                    ::core::default::Default
                )]
                pub struct #struct_ident;
            }
            #import
        };
    };
    // The module cannot name the user's type (it may be local to a fn body), so the struct
    // holds the value as `dyn Any`; only `new`, outside, puts one in, of the right type.
    let shared = quote!(
        ::std::sync::Arc<dyn ::core::any::Any + ::core::marker::Send + ::core::marker::Sync>
    );
    let shared_impls = shared_impls(model, self_ty);
    quote! {
        #[allow(non_snake_case)]
        mod #module {
            #docs
            #[doc = ""]
            #[doc = " `into_tools()` on the `Arc` makes it with the other tools of the box;"]
            #[doc = " `new` makes this tool alone."]
            pub struct #struct_ident(pub(super) #shared);
        }
        #import
        #shared_impls
    }
}

/// The struct's doc comment: where it comes from, then the tool's description.
fn struct_docs(model: &ToolFn) -> TokenStream {
    let summary = match &model.owner {
        Owner::Free => format!(
            " The `{}` tool, generated by `#[tool]` from `fn {}`.",
            model.name, model.fn_ident
        ),
        Owner::Toolbox { self_ty, .. } => format!(
            " The `{}` tool, generated by `#[toolbox]` from `{}::{}`.",
            model.name,
            quote!(#self_ty).to_string().replace(' ', ""),
            model.fn_ident
        ),
    };
    let description = model.description.lines().map(|line| format!(" {line}"));
    quote! {
        #[doc = #summary]
        #[doc = ""]
        #(#[doc = #description])*
    }
}

/// A toolbox method's struct: `new` from the shared value, `Clone` sharing it, and a
/// `Debug` that shows the tool, not the value.
fn shared_impls(model: &ToolFn, self_ty: &syn::Type) -> TokenStream {
    let vis = &model.vis;
    let struct_path = struct_path(model);
    let debug_name = model.struct_ident.to_string();
    let arc = quote!(::std::sync::Arc<#self_ty>);
    quote! {
        impl #struct_path {
            /// This tool alone, sharing `value`.
            #[allow(dead_code, private_interfaces)]
            #vis fn new(value: #arc) -> Self {
                Self(value)
            }
        }

        #[automatically_derived]
        impl ::core::clone::Clone for #struct_path {
            fn clone(&self) -> Self {
                Self(::std::sync::Arc::clone(&self.0))
            }
        }

        #[automatically_derived]
        impl ::core::fmt::Debug for #struct_path {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.debug_tuple(#debug_name).finish_non_exhaustive()
            }
        }
    }
}

/// The struct schemars derives the input schema from: one field per schema property, in
/// parameter order, carrying the parameter's `#[schemars(...)]` attributes. Its field
/// types are type parameters, filled in with the user's types only where the schema is
/// built ([`input_schema`]), so a type without a schema is reported by [`param_checks`]
/// alone, at the parameter.
fn args_struct(model: &ToolFn) -> TokenStream {
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

/// Decode every argument (a failure returns an error result naming the tool and the
/// field), bind the injected values, call the user's fn and convert what it returns.
fn execute_body(model: &ToolFn) -> TokenStream {
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

/// The parameters the runtime fills in.
fn injected(model: &ToolFn) -> impl Iterator<Item = &Param> {
    model
        .params
        .iter()
        .filter(|p| matches!(p.role, Role::Injected(_)))
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
fn shared_value(self_ty: &syn::Type, binding: &TokenStream, refused: &TokenStream) -> TokenStream {
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
fn binding(krate: &syn::Path, param: &Param, refused: &TokenStream) -> TokenStream {
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

/// `ty` with every named lifetime written `'_`: the fn's own lifetime parameters
/// (`Option<&'a Answer>`) do not exist in the generated body, where the borrow is inferred.
fn elide_lifetimes(ty: &syn::Type) -> TokenStream {
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
