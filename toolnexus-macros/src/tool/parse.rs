//! The model of a `#[tool]` fn or `#[toolbox]` method: what the tool is called, what it
//! says about itself, and what each parameter is (a schema property or an injected value),
//! with every problem of the signature recorded at the token that causes it.

use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{
    Attribute, FnArg, GenericArgument, GenericParam, Ident, Pat, Path, PathArguments, Receiver,
    ReturnType, Signature, Type, Visibility,
};

use crate::attr::{doc_text, take_param_attrs, ParamAttrs, ToolOptions};
use crate::diag::Errors;

/// A `#[tool]` fn, read.
pub(crate) struct ToolFn {
    /// The runtime crate's path.
    pub(crate) krate: Path,
    /// A free fn, or a method of a `#[toolbox]` impl.
    pub(crate) owner: Owner,
    /// The generated struct.
    pub(crate) vis: Visibility,
    pub(crate) struct_ident: Ident,
    /// The user's fn.
    pub(crate) fn_ident: Ident,
    /// The tool's name and description as the model sees them.
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) params: Vec<Param>,
    /// Where errors about the future (not `Send`) and the result type are reported.
    pub(crate) sig_span: Span,
    pub(crate) output: ReturnType,
}

/// Where the fn is declared, which decides what the generated struct holds and how the fn
/// is called.
pub(crate) enum Owner {
    /// A free fn: the struct is a unit struct, the call is `f(..)`.
    Free,
    /// A method of a `#[toolbox]` impl on `self_ty`: the struct holds an `Arc` of it.
    Toolbox {
        self_ty: Box<Type>,
        /// Names the struct: `Shop` + `stock` gives `ShopStockTool`.
        self_ident: Ident,
        /// Whether the method takes `&self`; an associated fn without `self` is a tool that
        /// merely lives in the box.
        takes_self: bool,
    },
}

/// The parts of a fn or method that make a tool.
pub(crate) struct FnParts<'a> {
    pub(crate) attrs: &'a [Attribute],
    pub(crate) vis: &'a Visibility,
    pub(crate) sig: &'a mut Signature,
}

/// One parameter of the user's fn.
pub(crate) struct Param {
    /// The binding, as written (possibly a raw identifier).
    pub(crate) ident: Ident,
    pub(crate) ty: Type,
    pub(crate) role: Role,
}

/// Where a parameter's value comes from.
pub(crate) enum Role {
    /// Decoded from the call's arguments: a property of the input schema.
    Arg {
        name: String,
        description: Option<String>,
    },
    /// `Option<&Answer>`: the host's answer on a resumed call.
    Answer,
    /// `Option<Answered<T>>`: the answer's data decoded into `T`.
    Answered(Type),
    /// `&ToolContext`.
    Context,
    /// `#[answer]` on a parameter of any spelling.
    MarkedAnswer,
    /// `#[context]` on a parameter of any spelling.
    MarkedContext,
}

impl ToolFn {
    /// Reads a fn, removing the helper attributes from its parameters. Problems go to
    /// `errors`; the model is still complete enough to emit a stub that keeps later
    /// errors about the struct from cascading.
    pub(crate) fn read(
        func: FnParts<'_>,
        mut owner: Owner,
        options: &ToolOptions,
        krate: Path,
        errors: &mut Errors,
    ) -> ToolFn {
        let FnParts { attrs, vis, sig } = func;
        check_signature(sig, errors);
        let fn_ident = sig.ident.clone();
        let struct_ident = struct_ident(&fn_ident, &owner, options, errors);
        let name = tool_name(&fn_ident, options, errors);
        let description = description(attrs, options, &fn_ident, &name, errors);
        let mut params = Vec::new();
        for input in sig.inputs.iter_mut() {
            match input {
                FnArg::Receiver(receiver) => read_receiver(receiver, &mut owner, errors),
                FnArg::Typed(arg) => params.extend(read_param(arg, &krate, errors)),
            }
        }
        ToolFn {
            sig_span: sig.ident.span(),
            output: sig.output.clone(),
            vis: vis.clone(),
            krate,
            owner,
            struct_ident,
            fn_ident,
            name,
            description,
            params,
        }
    }
}

/// The `description` option, else the doc comment; a tool without one is an error, since
/// the description is how the model decides when to call it.
fn description(
    attrs: &[Attribute],
    options: &ToolOptions,
    fn_ident: &Ident,
    name: &str,
    errors: &mut Errors,
) -> String {
    if let Some(lit) = &options.description {
        let text = lit.value().trim().to_owned();
        if text.is_empty() {
            errors.at(lit, "the description is empty: say what the tool does");
        }
        return text;
    }
    doc_text(attrs).unwrap_or_else(|| {
        errors.at(
            fn_ident,
            format_args!(
                "the tool `{name}` has no description, and the model needs one to know when to \
                 call it: add a `/// doc comment` to the fn, or `#[tool(description = \"...\")]`"
            ),
        );
        String::new()
    })
}

fn check_signature(sig: &Signature, errors: &mut Errors) {
    if sig.asyncness.is_none() {
        errors.at(
            sig.fn_token,
            "a #[tool] fn must be `async`: write `async fn` (tools run inside the async agent loop)",
        );
    }
    if let Some(unsafety) = &sig.unsafety {
        errors.at(
            unsafety,
            "a #[tool] fn cannot be `unsafe`: the model calls it with arbitrary arguments",
        );
    }
    if let Some(abi) = &sig.abi {
        errors.at(abi, "a #[tool] fn cannot have an `extern` ABI");
    }
    // Lifetime parameters are fine (`Option<&'a Answer>`): the call infers them.
    let generic = sig
        .generics
        .params
        .iter()
        .find(|p| !matches!(p, GenericParam::Lifetime(_)));
    if let Some(param) = generic {
        errors.at(
            param,
            "a #[tool] fn cannot be generic: its parameters are decoded from the model's JSON \
             at run time, so their types must be concrete",
        );
    } else if let Some(clause) = &sig.generics.where_clause {
        errors.at(clause, "a #[tool] fn cannot have a `where` clause");
    }
    if let Some(variadic) = &sig.variadic {
        errors.at(variadic, "a #[tool] fn cannot be variadic");
    }
}

fn struct_ident(
    fn_ident: &Ident,
    owner: &Owner,
    options: &ToolOptions,
    errors: &mut Errors,
) -> Ident {
    if let Some(lit) = &options.struct_name {
        match lit.parse::<Ident>() {
            Ok(ident) => return ident,
            Err(_) => errors.at(
                lit,
                "`struct_name` must be a Rust identifier, e.g. `struct_name = \"AddTool\"`",
            ),
        }
    }
    let camel = match owner {
        Owner::Free => upper_camel(&fn_ident.unraw().to_string()),
        Owner::Toolbox { self_ident, .. } => format!(
            "{}{}Tool",
            self_ident.unraw(),
            upper_camel(&fn_ident.unraw().to_string())
        ),
    };
    match syn::parse_str::<Ident>(&camel) {
        // Spanned at the fn name, so "go to definition" on the struct lands on the fn.
        Ok(_) => Ident::new(&camel, fn_ident.span()),
        Err(_) => {
            errors.at(
                fn_ident,
                format_args!(
                    "`{camel}` cannot name the generated struct: set one with \
                     `#[tool(struct_name = \"...\")]`"
                ),
            );
            Ident::new("__ToolnexusInvalidName", fn_ident.span())
        }
    }
}

/// `approve_purchase` → `ApprovePurchase`.
fn upper_camel(snake: &str) -> String {
    let mut out = String::with_capacity(snake.len());
    for word in snake.split('_').filter(|w| !w.is_empty()) {
        let mut chars = word.chars();
        if let Some(first) = chars.next() {
            out.extend(first.to_uppercase());
            out.push_str(chars.as_str());
        }
    }
    out
}

fn is_valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

fn tool_name(fn_ident: &Ident, options: &ToolOptions, errors: &mut Errors) -> String {
    match &options.name {
        Some(lit) => {
            let name = lit.value();
            if !is_valid_name(&name) {
                errors.at(
                    lit,
                    "a tool name must be non-empty and use only `a-z`, `A-Z`, `0-9`, `_` and `-` \
                     (what every provider accepts), e.g. `name = \"get_weather\"`",
                );
            }
            name
        }
        None => {
            let name = fn_ident.unraw().to_string();
            if !is_valid_name(&name) {
                errors.at(
                    fn_ident,
                    "a tool name may only use `a-z`, `A-Z`, `0-9`, `_` and `-`: rename the fn or \
                     set `#[tool(name = \"...\")]`",
                );
            }
            name
        }
    }
}

/// A method's `self`: only `&self` makes sense for tools that share one value and may run
/// at the same time.
fn read_receiver(receiver: &Receiver, owner: &mut Owner, errors: &mut Errors) {
    let Owner::Toolbox { takes_self, .. } = owner else {
        errors.at(
            receiver,
            "a free #[tool] fn has no `self`: to make tools of methods sharing one value, \
             put `#[toolbox]` on the impl block",
        );
        return;
    };
    match strip_group(&receiver.ty) {
        Type::Reference(r) if r.mutability.is_none() && is_self(&r.elem) => *takes_self = true,
        Type::Reference(r) if r.mutability.is_some() => errors.at(
            receiver,
            "a tool method takes `&self`, not `&mut self`: the tools of a toolbox share one \
             value and may run at the same time; keep changing state behind interior \
             mutability (`Mutex`, `RwLock`, atomics)",
        ),
        _ => errors.at(
            receiver,
            "a tool method takes `&self`: its toolbox lives in an `Arc` shared by all of its \
             tools, so a call can borrow the value but never own it",
        ),
    }
}

fn is_self(ty: &Type) -> bool {
    matches!(strip_group(ty), Type::Path(p) if p.qself.is_none() && p.path.is_ident("Self"))
}

fn read_param(arg: &mut syn::PatType, krate: &Path, errors: &mut Errors) -> Option<Param> {
    let attrs = take_param_attrs(&mut arg.attrs, errors);
    let ident = match &*arg.pat {
        Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => Some(p.ident.clone()),
        pat => {
            errors.at(
                pat,
                "use a plain identifier for a #[tool] parameter (`name: Type`): its name \
                 becomes the property name in the input schema; destructure in the body",
            );
            None
        }
    };
    if let Some(impl_trait) = find_impl_trait(&arg.ty) {
        errors.at_span(
            impl_trait,
            "a #[tool] parameter cannot be `impl Trait`: its value is decoded from JSON, so \
             name a concrete type",
        );
        return None;
    }
    let role = role(&arg.ty, &attrs, ident.as_ref(), krate, errors)?;
    Some(Param {
        ident: ident?,
        ty: (*arg.ty).clone(),
        role,
    })
}

fn role(
    ty: &Type,
    attrs: &ParamAttrs,
    ident: Option<&Ident>,
    krate: &Path,
    errors: &mut Errors,
) -> Option<Role> {
    let role = match (attrs.answer, attrs.context) {
        (Some(_), Some(context)) => {
            errors.at_span(
                context,
                "a parameter is either `#[answer]` or `#[context]`, not both",
            );
            return None;
        }
        (Some(_), None) => Role::MarkedAnswer,
        (None, Some(_)) => Role::MarkedContext,
        (None, None) => match injected(ty, krate) {
            Some(role) => role,
            None => {
                if let Type::Reference(reference) = strip_group(ty) {
                    errors.at(
                        reference.and_token,
                        "a #[tool] parameter is decoded from JSON and must be owned (e.g. \
                         `String`, not `&str`); only `&ToolContext` and `Option<&Answer>` are \
                         lent by the runtime (mark an alias of them `#[context]` / `#[answer]`)",
                    );
                    return None;
                }
                Role::Arg {
                    name: ident.map(|i| i.unraw().to_string()).unwrap_or_default(),
                    description: attrs.description.clone(),
                }
            }
        },
    };
    if let (Some(arg), false) = (attrs.arg, matches!(role, Role::Arg { .. })) {
        errors.at_span(
            arg,
            "`#[arg]` describes a schema property, but this parameter is injected by the runtime \
             and is not in the schema: remove `#[arg(...)]`",
        );
    }
    Some(role)
}

/// Recognises the injected parameter types by their spelling: `Option<&Answer>`,
/// `Option<Answered<T>>` and `&ToolContext`, bare or behind the runtime crate's path. A
/// user's own type that happens to have one of these names is recognised too, and then
/// fails to type-check at the parameter (the generated binding names the runtime's type),
/// so it is never silently given the wrong value.
fn injected(ty: &Type, krate: &Path) -> Option<Role> {
    match strip_group(ty) {
        Type::Reference(r) if r.mutability.is_none() => {
            let Type::Path(p) = strip_group(&r.elem) else {
                return None;
            };
            (p.qself.is_none() && is_runtime_item(&p.path, krate, "ToolContext"))
                .then_some(Role::Context)
        }
        Type::Path(p) if p.qself.is_none() => {
            let inner = option_arg(&p.path)?;
            match strip_group(inner) {
                Type::Reference(r) if r.mutability.is_none() => match strip_group(&r.elem) {
                    Type::Path(p) if p.qself.is_none() => {
                        is_runtime_item(&p.path, krate, "Answer").then_some(Role::Answer)
                    }
                    _ => None,
                },
                Type::Path(p) if p.qself.is_none() => {
                    let last = p.path.segments.last()?;
                    if last.ident != "Answered" || !is_runtime_prefix(&p.path, krate) {
                        return None;
                    }
                    single_type_arg(&last.arguments).map(|t| Role::Answered(t.clone()))
                }
                _ => None,
            }
        }
        _ => None,
    }
}

fn strip_group(ty: &Type) -> &Type {
    match ty {
        Type::Group(g) => strip_group(&g.elem),
        Type::Paren(p) => strip_group(&p.elem),
        other => other,
    }
}

/// `T` of `Option<T>`, `std::option::Option<T>` or `core::option::Option<T>`.
fn option_arg(path: &Path) -> Option<&Type> {
    let names: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    let is_option = match names.as_slice() {
        [one] => one == "Option",
        [root, module, item] => {
            (root == "std" || root == "core") && module == "option" && item == "Option"
        }
        _ => false,
    };
    let last = path.segments.last()?;
    if !is_option {
        return None;
    }
    single_type_arg(&last.arguments)
}

fn single_type_arg(args: &PathArguments) -> Option<&Type> {
    let PathArguments::AngleBracketed(args) = args else {
        return None;
    };
    let mut types = args.args.iter().filter_map(|a| match a {
        GenericArgument::Type(t) => Some(t),
        _ => None,
    });
    let first = types.next()?;
    types.next().is_none().then_some(first)
}

/// `Name`, `toolnexus::Name` or `<runtime path>::Name`, without generic arguments.
fn is_runtime_item(path: &Path, krate: &Path, name: &str) -> bool {
    match path.segments.last() {
        Some(last) => {
            last.ident == name
                && matches!(last.arguments, PathArguments::None)
                && is_runtime_prefix(path, krate)
        }
        None => false,
    }
}

/// Whether everything before the last segment is nothing, `toolnexus` or the runtime path.
pub(crate) fn is_runtime_prefix(path: &Path, krate: &Path) -> bool {
    let prefix: Vec<String> = path
        .segments
        .iter()
        .take(path.segments.len().saturating_sub(1))
        .map(|s| s.ident.to_string())
        .collect();
    let runtime: Vec<String> = krate.segments.iter().map(|s| s.ident.to_string()).collect();
    prefix.is_empty() || prefix == ["toolnexus"] || prefix == runtime
}

/// The first `impl Trait` inside a type, which a decoded parameter cannot be.
fn find_impl_trait(ty: &Type) -> Option<Span> {
    match ty {
        Type::ImplTrait(t) => Some(t.span()),
        Type::Group(g) => find_impl_trait(&g.elem),
        Type::Paren(p) => find_impl_trait(&p.elem),
        Type::Reference(r) => find_impl_trait(&r.elem),
        Type::Slice(s) => find_impl_trait(&s.elem),
        Type::Array(a) => find_impl_trait(&a.elem),
        Type::Ptr(p) => find_impl_trait(&p.elem),
        Type::Tuple(t) => t.elems.iter().find_map(find_impl_trait),
        Type::Path(p) => p.path.segments.iter().find_map(|s| match &s.arguments {
            PathArguments::AngleBracketed(args) => args.args.iter().find_map(|a| match a {
                GenericArgument::Type(t) => find_impl_trait(t),
                _ => None,
            }),
            _ => None,
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn camel_case_of_fn_names() {
        assert_eq!(upper_camel("approve_purchase"), "ApprovePurchase");
        assert_eq!(upper_camel("add"), "Add");
        assert_eq!(upper_camel("_get__v2_data"), "GetV2Data");
    }

    #[test]
    fn injected_types_by_spelling() {
        let krate: Path = syn::parse_quote!(::tn);
        let role = |ty: Type| injected(&ty, &krate);
        assert!(matches!(
            role(syn::parse_quote!(Option<&Answer>)),
            Some(Role::Answer)
        ));
        assert!(matches!(
            role(syn::parse_quote!(
                ::core::option::Option<&'a ::toolnexus::Answer>
            )),
            Some(Role::Answer)
        ));
        assert!(matches!(
            role(syn::parse_quote!(Option<&tn::Answer>)),
            Some(Role::Answer)
        ));
        assert!(matches!(
            role(syn::parse_quote!(&ToolContext)),
            Some(Role::Context)
        ));
        assert!(matches!(
            role(syn::parse_quote!(Option<Answered<Form>>)),
            Some(Role::Answered(_))
        ));
        assert!(role(syn::parse_quote!(Option<&other::Answer>)).is_none());
        assert!(role(syn::parse_quote!(Option<Answer>)).is_none());
        assert!(role(syn::parse_quote!(&mut ToolContext)).is_none());
        assert!(role(syn::parse_quote!(String)).is_none());
    }
}
