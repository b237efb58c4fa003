//! The model of a `#[tool]` fn or `#[toolbox]` method: what the tool is called, what it
//! says about itself, and what each parameter is (a schema property or an injected value).
//! Reading only records what cannot be read at all; whether what was read is allowed is
//! [`check`](super::check)'s business.

use proc_macro2::{Group, Span, TokenStream, TokenTree};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{
    Attribute, FnArg, GenericArgument, Ident, Pat, Path, PathArguments, Receiver, ReturnType,
    Signature, Type, Visibility,
};

use crate::attr::{doc_text, take_param_attrs, ApprovalOption, ParamAttrs, ToolOptions};
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
    /// The hidden module the struct is defined in (see [`expand`](super::expand)).
    pub(crate) module_ident: Ident,
    /// The user's fn.
    pub(crate) fn_ident: Ident,
    /// The tool's name and description as the model sees them.
    pub(crate) name: String,
    /// The `name = "..."` option, when the name is not the fn's.
    pub(crate) name_lit: Option<syn::LitStr>,
    pub(crate) description: String,
    /// The `description = "..."` option, when the description is not the doc comment.
    pub(crate) description_lit: Option<syn::LitStr>,
    pub(crate) params: Vec<Param>,
    /// The method's `self`, if any.
    pub(crate) receiver: Option<Receiver>,
    /// Where errors about the future (not `Send`) and the result type are reported.
    pub(crate) sig_span: Span,
    pub(crate) output: ReturnType,
    /// An `async fn` is awaited; a plain `fn` is called as is.
    pub(crate) is_async: bool,
    /// `#[tool(output_schema)]`, where it was written.
    pub(crate) output_schema: Option<Span>,
    /// `#[tool(approval ...)]`: ask a person before a call runs.
    pub(crate) approval: Option<ApprovalOption>,
}

/// Where the fn is declared, which decides what the generated struct holds and how the fn
/// is called.
pub(crate) enum Owner {
    /// A free fn: the struct is a unit struct, the call is `f(..)`.
    Free,
    /// A method of a `#[toolbox]` impl on `self_ty`: the struct holds an `Arc` of it.
    Toolbox {
        self_ty: Box<Type>,
        /// Names the struct: `Shop` + `stock` gives `ShopStock`.
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
    /// Its helper attributes, for the checks.
    pub(crate) attrs: ParamAttrs,
}

/// Where a parameter's value comes from.
pub(crate) enum Role {
    /// Decoded from the call's arguments: a property of the input schema.
    Arg {
        /// The property's name on the wire (`#[arg(rename)]`, else the parameter's).
        name: String,
        description: Option<String>,
        /// `#[arg(default = EXPR)]`: the property is optional and shows this default.
        default: Option<Box<syn::Expr>>,
    },
    /// Filled in by the runtime from the call's parts.
    Injected(Injected),
}

/// What an injected parameter is meant to receive, as its spelling or mark says. The
/// generated code takes every one through the runtime's `FromCallParts`, so the type
/// decides what is filled in and a type that cannot be is a trait error on that parameter;
/// the intent only names, in that error, what the parameter was taken for.
#[derive(Clone, Copy)]
pub(crate) enum Injected {
    /// The host's answer on a resumed call: `Option<&Answer>`, `Option<Answered<T>>`, or
    /// any type marked `#[answer]`.
    Answer,
    /// The call's context: `&ToolContext`, or any type marked `#[context]`.
    Context,
    /// A value the host attached to the run: `Ext<T>`, or `Option<Ext<T>>` when the tool
    /// can do without it.
    Extension,
}

impl Injected {
    /// The runtime's trait a parameter of this intent is bound through, whose error says
    /// where such a value goes.
    pub(crate) fn binder(self) -> &'static str {
        match self {
            Injected::Answer => "AnswerParam",
            Injected::Context => "ContextParam",
            Injected::Extension => "ExtensionParam",
        }
    }
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
        let fn_ident = sig.ident.clone();
        let struct_ident = struct_ident(&fn_ident, &owner, options, errors);
        let module_ident = module_ident(&fn_ident, &owner);
        let name = match &options.name {
            Some(lit) => lit.value(),
            None => fn_ident.unraw().to_string(),
        };
        let description = match &options.description {
            Some(lit) => lit.value().trim().to_owned(),
            None => doc_text(attrs).unwrap_or_default(),
        };
        let mut params = Vec::new();
        let mut receiver = None;
        for input in sig.inputs.iter_mut() {
            match input {
                FnArg::Receiver(r) => {
                    read_receiver(r, &mut owner);
                    receiver = Some(r.clone());
                }
                FnArg::Typed(arg) => params.extend(read_param(arg, &krate, errors)),
            }
        }
        ToolFn {
            sig_span: sig.ident.span(),
            output: sig.output.clone(),
            is_async: sig.asyncness.is_some(),
            output_schema: options.output_schema,
            approval: options.approval.clone(),
            vis: vis.clone(),
            krate,
            owner,
            struct_ident,
            module_ident,
            fn_ident,
            name,
            name_lit: options.name.clone(),
            description,
            description_lit: options.description.clone(),
            params,
            receiver,
        }
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
    // One rule for both: the UpperCamelCase of the fn's path in its module, so
    // `approve_purchase` gives `ApprovePurchase` and `Shop::stock` gives `ShopStock`.
    let camel = match owner {
        Owner::Free => upper_camel(&fn_ident.unraw().to_string()),
        Owner::Toolbox { self_ident, .. } => format!(
            "{}{}",
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

/// The hidden module holding the struct, named after the fn (not the struct), so two
/// tools whose structs would share a name collide on that name, where the check says how
/// to rename one.
fn module_ident(fn_ident: &Ident, owner: &Owner) -> Ident {
    let name = match owner {
        Owner::Free => format!("__toolnexus_tool_{}", fn_ident.unraw()),
        Owner::Toolbox { self_ident, .. } => {
            format!(
                "__toolnexus_tool_{}_{}",
                self_ident.unraw(),
                fn_ident.unraw()
            )
        }
    };
    Ident::new(&name, fn_ident.span())
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

/// A method's `&self` makes the tool hold the shared value; any other `self` is refused
/// by the checks.
fn read_receiver(receiver: &Receiver, owner: &mut Owner) {
    if let Owner::Toolbox { takes_self, .. } = owner {
        *takes_self = matches!(
            strip_group(&receiver.ty),
            Type::Reference(r) if r.mutability.is_none() && is_self(&r.elem)
        );
    }
}

fn is_self(ty: &Type) -> bool {
    matches!(strip_group(ty), Type::Path(p) if p.qself.is_none() && p.path.is_ident("Self"))
}

fn read_param(arg: &mut syn::PatType, krate: &Path, errors: &mut Errors) -> Option<Param> {
    let attrs = take_param_attrs(&mut arg.attrs, errors);
    let ident = match &*arg.pat {
        Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => p.ident.clone(),
        pat => {
            errors.at(
                pat,
                "use a plain identifier for a #[tool] parameter (`name: Type`): its name \
                 becomes the property name in the input schema; destructure in the body",
            );
            return None;
        }
    };
    let role = if attrs.answer.is_some() {
        Role::Injected(Injected::Answer)
    } else if attrs.context.is_some() {
        Role::Injected(Injected::Context)
    } else if let Some(intent) = injected(&arg.ty, krate) {
        Role::Injected(intent)
    } else {
        Role::Arg {
            name: match &attrs.rename {
                Some(lit) => lit.value(),
                None => ident.unraw().to_string(),
            },
            description: attrs.description.clone(),
            default: attrs.default.clone().map(Box::new),
        }
    };
    Some(Param {
        ident,
        ty: (*arg.ty).clone(),
        role,
        attrs,
    })
}

/// Recognises the injected parameter types by their spelling: `Option<&Answer>`,
/// `Option<Answered<T>>` and `&ToolContext`, bare or behind the runtime crate's path. A
/// user's own type that happens to have one of these names is recognised too, and then
/// fails to type-check at the parameter (the generated binding names the runtime's type),
/// so it is never silently given the wrong value.
fn injected(ty: &Type, krate: &Path) -> Option<Injected> {
    match strip_group(ty) {
        Type::Reference(r) if r.mutability.is_none() => {
            let Type::Path(p) = strip_group(&r.elem) else {
                return None;
            };
            (p.qself.is_none() && is_runtime_item(&p.path, krate, "ToolContext"))
                .then_some(Injected::Context)
        }
        Type::Path(p) if p.qself.is_none() => {
            if is_extension(&p.path, krate) {
                return Some(Injected::Extension);
            }
            let inner = option_arg(&p.path)?;
            match strip_group(inner) {
                Type::Reference(r) if r.mutability.is_none() => match strip_group(&r.elem) {
                    Type::Path(p) if p.qself.is_none() => {
                        is_runtime_item(&p.path, krate, "Answer").then_some(Injected::Answer)
                    }
                    _ => None,
                },
                Type::Path(p) if p.qself.is_none() && is_extension(&p.path, krate) => {
                    Some(Injected::Extension)
                }
                Type::Path(p) if p.qself.is_none() => {
                    let last = p.path.segments.last()?;
                    if last.ident != "Answered" || !is_runtime_prefix(&p.path, krate) {
                        return None;
                    }
                    single_type_arg(&last.arguments).map(|_| Injected::Answer)
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// `Ext<T>`, bare or behind the runtime crate's path.
fn is_extension(path: &Path, krate: &Path) -> bool {
    path.segments.last().is_some_and(|last| {
        last.ident == "Ext"
            && single_type_arg(&last.arguments).is_some()
            && is_runtime_prefix(path, krate)
    })
}

/// The `Answer` of an `Option<Answer>` written without the `&`.
pub(crate) fn owned_answer<'t>(ty: &'t Type, krate: &Path) -> Option<&'t Type> {
    let Type::Path(p) = strip_group(ty) else {
        return None;
    };
    let inner = option_arg(&p.path)?;
    match strip_group(inner) {
        Type::Path(q) if q.qself.is_none() && is_runtime_item(&q.path, krate, "Answer") => {
            Some(inner)
        }
        _ => None,
    }
}

/// The typed value a tool returns, for `output_schema`: `T` of `-> T`, `-> Json<T>`,
/// `-> Result<T, E>` or `-> Result<Json<T>, E>` (any `Result` alias with the value first).
/// `None` when it returns nothing, text or a `ToolResult`.
pub(crate) fn output_value(output: &ReturnType) -> Option<&Type> {
    let ReturnType::Type(_, ty) = output else {
        return None;
    };
    let mut ty = strip_group(ty);
    for wrapper in ["Result", "Json"] {
        if let Type::Path(p) = ty {
            let last = p.path.segments.last()?;
            if last.ident == wrapper {
                if let PathArguments::AngleBracketed(args) = &last.arguments {
                    if let Some(GenericArgument::Type(inner)) = args.args.first() {
                        ty = strip_group(inner);
                    }
                }
            }
        }
    }
    let text = match ty {
        Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
        Type::Reference(_) => Some("str".to_owned()),
        Type::Tuple(t) if t.elems.is_empty() => Some("()".to_owned()),
        _ => None,
    };
    match text.as_deref() {
        Some("ToolResult" | "String" | "str" | "()") => None,
        _ => Some(ty),
    }
}

/// `tokens` with every `self` value (not a `self::` path) renamed `to`, each at its own
/// span, and where the first was: how a toolbox's `when` condition reads the shared value
/// from inside the generated `approval`, where `self` is the tool struct.
pub(crate) fn rename_self(tokens: TokenStream, to: &str) -> (TokenStream, Option<Span>) {
    let mut first = None;
    let mut out = TokenStream::new();
    let mut iter = tokens.into_iter().peekable();
    while let Some(tt) = iter.next() {
        match tt {
            TokenTree::Ident(ident) if ident == "self" => {
                let is_path =
                    matches!(iter.peek(), Some(TokenTree::Punct(p)) if p.as_char() == ':');
                if is_path {
                    out.extend([TokenTree::Ident(ident)]);
                } else {
                    first.get_or_insert(ident.span());
                    out.extend([TokenTree::Ident(Ident::new(to, ident.span()))]);
                }
            }
            TokenTree::Group(g) => {
                let (inner, found) = rename_self(g.stream(), to);
                first = first.or(found);
                let mut group = Group::new(g.delimiter(), inner);
                group.set_span(g.span());
                out.extend([TokenTree::Group(group)]);
            }
            other => out.extend([other]),
        }
    }
    (out, first)
}

pub(crate) fn strip_group(ty: &Type) -> &Type {
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
pub(crate) fn find_impl_trait(ty: &Type) -> Option<Span> {
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
            Some(Injected::Answer)
        ));
        assert!(matches!(
            role(syn::parse_quote!(
                ::core::option::Option<&'a ::toolnexus::Answer>
            )),
            Some(Injected::Answer)
        ));
        assert!(matches!(
            role(syn::parse_quote!(Option<&tn::Answer>)),
            Some(Injected::Answer)
        ));
        assert!(matches!(
            role(syn::parse_quote!(&ToolContext)),
            Some(Injected::Context)
        ));
        assert!(matches!(
            role(syn::parse_quote!(Option<Answered<Form>>)),
            Some(Injected::Answer)
        ));
        assert!(matches!(
            role(syn::parse_quote!(Ext<Tenant>)),
            Some(Injected::Extension)
        ));
        assert!(matches!(
            role(syn::parse_quote!(Option<::toolnexus::Ext<db::Pool>>)),
            Some(Injected::Extension)
        ));
        assert!(role(syn::parse_quote!(other::Ext<Tenant>)).is_none());
        assert!(role(syn::parse_quote!(Ext)).is_none());
        assert!(role(syn::parse_quote!(Option<&other::Answer>)).is_none());
        assert!(role(syn::parse_quote!(Option<Answer>)).is_none());
        assert!(role(syn::parse_quote!(&mut ToolContext)).is_none());
        assert!(role(syn::parse_quote!(String)).is_none());
    }
}
