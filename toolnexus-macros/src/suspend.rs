//! `pending!`, `pending_all!` and `auth_required!`: a suspension result built from named
//! arguments.
//!
//! Values are evaluated once each, in the order written, then assembled into a `Request`.

use proc_macro2::{Delimiter, Span, TokenStream, TokenTree};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use crate::diag::Errors;
use crate::named::{Named, NamedArgs, Spec, Value};
use crate::runtime;

const PENDING: Spec = Spec {
    context: "pending!",
    exprs: &[
        "kind",
        "prompt",
        "url",
        "data",
        "id",
        "expires_at",
        "responders",
    ],
    types: &["answer"],
    flags: &[],
    lists: &[],
    example: "pending!(kind = \"approval\", prompt = \"Approve the purchase?\")",
};

const AUTH_REQUIRED: Spec = Spec {
    context: "auth_required!",
    exprs: &["url", "prompt"],
    types: &[],
    flags: &[],
    lists: &[],
    example: "auth_required!(url = \"https://example.com/login\")",
};

/// The optional `Request` builder calls, by key.
const BUILDERS: &[(&str, &str)] = &[
    ("url", "with_url"),
    ("id", "with_id"),
    ("expires_at", "with_expires_at"),
];

/// Splits `RUNTIME_PATH; ARGS` (what the runtime's `macro_rules!` fronts pass) and expands
/// `ARGS` with `expand`, naming the runtime by that path.
pub(crate) fn with_runtime(
    input: TokenStream,
    expand: fn(TokenStream, &TokenStream) -> syn::Result<TokenStream>,
) -> syn::Result<TokenStream> {
    let mut tokens = input.into_iter();
    let mut krate = TokenStream::new();
    for tt in tokens.by_ref() {
        match &tt {
            TokenTree::Punct(p) if p.as_char() == ';' => {
                return expand(tokens.collect(), &krate);
            }
            _ => krate.extend([tt]),
        }
    }
    Err(syn::Error::new(
        Span::call_site(),
        "expected `RUNTIME_PATH; ARGS`: call `pending!`/`auth_required!` from the runtime crate",
    ))
}

pub(crate) fn pending(input: TokenStream, krate: &TokenStream) -> syn::Result<TokenStream> {
    pending_at(input, krate, Span::call_site())
}

/// What `pending_all!` needs of each request, and the shape of a whole call.
const PENDING_ALL_EXAMPLE: &str = "pending_all![(kind = \"approval\", prompt = \"Ship it?\"), \
     (kind = \"input\", prompt = \"Gift note?\")]";

/// `pending_all![(ARGS), (ARGS), …]`: each parenthesized list is one request, written as
/// `pending!`'s arguments and checked the same way; the value is one suspension on them
/// all. Every misshapen list is reported, each at its own tokens.
pub(crate) fn pending_all(input: TokenStream, krate: &TokenStream) -> syn::Result<TokenStream> {
    let mut errors: Option<syn::Error> = None;
    let mut push = |e: syn::Error| match &mut errors {
        Some(all) => all.combine(e),
        None => errors = Some(e),
    };
    let mut each = Vec::new();
    let mut tokens = input.into_iter().peekable();
    while let Some(tt) = tokens.next() {
        match &tt {
            TokenTree::Group(g) if g.delimiter() == Delimiter::Parenthesis => {
                match pending_at(g.stream(), krate, g.span()) {
                    Ok(one) => each.push(one),
                    Err(e) => push(e),
                }
            }
            _ => {
                push(syn::Error::new(
                    tt.span(),
                    format!(
                        "pending_all! takes each request as its own parenthesized list of \
                         `pending!` arguments, e.g. `{PENDING_ALL_EXAMPLE}`"
                    ),
                ));
                // What follows cannot be split into requests reliably: one error is enough.
                break;
            }
        }
        match tokens.next() {
            None => break,
            Some(TokenTree::Punct(p)) if p.as_char() == ',' => {}
            Some(other) => {
                push(syn::Error::new(
                    other.span(),
                    "expected `,` between the requests of pending_all!",
                ));
                // The rest cannot be split reliably: what was reported is enough.
                break;
            }
        }
    }
    if let Some(errors) = errors {
        return Err(errors);
    }
    if each.is_empty() {
        return Err(syn::Error::new(
            Span::call_site(),
            format!(
                "pending_all! needs at least one request (a call cannot wait on nothing), \
                 e.g. `{PENDING_ALL_EXAMPLE}`"
            ),
        ));
    }
    Ok(quote! {
        #krate::__private::pending_all([#(#each),*])
    })
}

/// `pending!`'s expansion, with a missing argument reported at `at`.
fn pending_at(input: TokenStream, krate: &TokenStream, at: Span) -> syn::Result<TokenStream> {
    let mut errors = Errors::default();
    let args = NamedArgs::parse(input, &PENDING, &mut errors);
    require(&args, &PENDING, &["kind", "prompt"], at, &mut errors);
    let args = errors.finish(args)?;

    let lets = bind_in_order(&args);
    let mut request = quote!(#krate::Request::new(__toolnexus_kind, __toolnexus_prompt));
    for (key, method) in BUILDERS {
        if let Some(arg) = args.get(key) {
            let var = var(arg);
            let method = format_ident!("{}", method);
            request = quote_spanned!(value_span(arg)=> #request.#method(#var));
        }
    }
    let given = args.get("data").map(|arg| {
        let var = var(arg);
        quote!(#var)
    });
    let responders = args.get("responders");
    // With `responders`, the data the request carries is `data` with them added.
    let with_responders = syn::Ident::new("__toolnexus_data_with_responders", Span::call_site());
    let data = match responders {
        Some(_) => Some(quote!(#with_responders)),
        None => given.clone(),
    };
    let mut result = match args.get("answer").map(|a| &a.value) {
        Some(Value::Type(ty)) => {
            let data = match &data {
                Some(var) => quote!(::core::option::Option::Some(#var)),
                None => quote!(::core::option::Option::None),
            };
            let krate_at_ty = runtime::at(krate, ty.span());
            let schema = quote_spanned! {ty.span()=>
                __TOOLNEXUS_ANSWER_SCHEMA.get_or_init(#krate_at_ty::__private::answer_schema::<#ty>)
            };
            quote! {{
                // One schema per call site (and so per answer type), built on first use.
                static __TOOLNEXUS_ANSWER_SCHEMA: ::std::sync::OnceLock<
                    ::core::result::Result<#krate::__private::serde_json::Value, ::std::string::String>,
                > = ::std::sync::OnceLock::new();
                #krate::__private::ask_form(#request, #data, #schema)
            }}
        }
        _ => {
            if let Some(var) = &data {
                request = quote!(#request.with_data(#var));
            }
            quote!(#krate::ToolResult::pending(#request))
        }
    };
    if let Some(arg) = responders {
        let list = var(arg);
        let given = match given {
            Some(var) => quote!(::core::option::Option::Some(#var)),
            None => quote!(::core::option::Option::None),
        };
        let merge = quote_spanned! {value_span(arg)=>
            #krate::__private::with_responders(#given, #list)
        };
        result = quote! {
            match #merge {
                ::core::result::Result::Ok(#with_responders) => #result,
                ::core::result::Result::Err(__toolnexus_why) => #krate::ToolResult::error(__toolnexus_why),
            }
        };
    }
    Ok(quote! {{
        #(#lets)*
        #result
    }})
}

pub(crate) fn auth_required(input: TokenStream, krate: &TokenStream) -> syn::Result<TokenStream> {
    let mut errors = Errors::default();
    let args = NamedArgs::parse(input, &AUTH_REQUIRED, &mut errors);
    require(
        &args,
        &AUTH_REQUIRED,
        &["url"],
        Span::call_site(),
        &mut errors,
    );
    let args = errors.finish(args)?;

    let lets = bind_in_order(&args);
    let prompt = match args.get("prompt") {
        Some(arg) => {
            let var = var(arg);
            quote_spanned! {value_span(arg)=>
                ::core::option::Option::Some(::core::convert::AsRef::<str>::as_ref(&#var))
            }
        }
        None => quote!(::core::option::Option::None),
    };
    Ok(quote! {{
        #(#lets)*
        #krate::ToolResult::auth_required(__toolnexus_url, #prompt)
    }})
}

/// Errors where an expression is expected: several `compile_error!`s side by side are
/// not one expression, so they go in a block.
pub(crate) fn expression_error(error: syn::Error) -> TokenStream {
    let errors = error.into_compile_error();
    quote!({ #errors })
}

/// Records what is missing, at `at` (the macro call, or one request of `pending_all!`),
/// with an example of a complete call.
fn require(args: &NamedArgs, spec: &Spec, required: &[&str], at: Span, errors: &mut Errors) {
    if !args.complete() {
        // The list stopped at a syntax error; what follows it is unknown.
        return;
    }
    let missing: Vec<String> = required
        .iter()
        .filter(|k| args.get(k).is_none())
        .map(|k| format!("`{k}`"))
        .collect();
    if missing.is_empty() {
        return;
    }
    let needs: Vec<String> = required.iter().map(|k| format!("`{k}`")).collect();
    errors.at_span(
        at,
        format_args!(
            "{} is missing {}: it needs {}, e.g. `{}`",
            spec.context,
            missing.join(" and "),
            needs.join(" and "),
            spec.example
        ),
    );
}

/// `let __toolnexus_<key> = <value>;` for every expression argument, in the order written.
fn bind_in_order(args: &NamedArgs) -> Vec<TokenStream> {
    args.iter()
        .filter_map(|arg| match &arg.value {
            Value::Expr(expr) => {
                let var = var(arg);
                Some(quote_spanned!(expr.span()=> let #var = #expr;))
            }
            Value::Type(_) | Value::Flag | Value::List(_) => None,
        })
        .collect()
}

/// The local holding an argument's value. All of them are made at the call site (not at
/// the user's key), like the names that read them: behind the runtime's `macro_rules!`
/// front, the two would otherwise live in different hygiene contexts.
fn var(arg: &Named) -> syn::Ident {
    syn::Ident::new(&format!("__toolnexus_{}", arg.key), Span::call_site())
}

fn value_span(arg: &Named) -> Span {
    match &arg.value {
        Value::Expr(e) => e.span(),
        Value::Type(t) => t.span(),
        Value::Flag => arg.key.span(),
        Value::List(group) => group.span(),
    }
}
