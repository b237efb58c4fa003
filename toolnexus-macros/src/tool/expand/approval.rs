//! `Tool::approval` and the rule beside it, for `#[tool(approval …)]`: whether a call asks,
//! what it says, and who may answer. Apart from `execute`'s code because it runs before the
//! call, on arguments the body may never see, and must refuse what `execute` would refuse.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::LitStr;

use super::bindings::{binding, shared_value};
use super::{args, injected};
use crate::attr::{ApprovalOption, EditsOption};
use crate::runtime;
use crate::template::Template;
use crate::tool::parse::{rename_self, Owner, Role, ToolFn};

/// `Tool::approval`, for `#[tool(approval …)]`. The arguments are decoded as `execute`
/// decodes them; arguments it would refuse ask nothing, since the body never runs on them.
/// Then the condition, which sees the parameters by value, as the body does, and the
/// prompt.
pub(super) fn approval(model: &ToolFn) -> Option<TokenStream> {
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
