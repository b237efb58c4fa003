//! Procedural macros for toolnexus: [`#[tool]`](macro@tool) and [`#[toolbox]`](macro@toolbox),
//! and the engines of `pending!` and `auth_required!`. Depend on `toolnexus`, which
//! re-exports them at the same version; the code they generate names the runtime crate,
//! never this one.
//!
//! The guide to writing tools is the documentation of [`#[tool]`](macro@tool): its options,
//! parameters and injected values, return types, suspending, typed answers, and approvals,
//! declared on a tool or named on a toolkit.

mod attr;
mod diag;
mod named;
mod runtime;
mod suspend;
mod template;
mod tool;
mod toolbox;

use proc_macro::TokenStream;

// The guide to `#[tool]` is long enough to be read as a document of its own; it is this
// macro's doc comment all the same, rendered and run as doctests from here.
#[doc = include_str!("tool/guide.md")]
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    tool::expand(attr.into(), item.into()).into()
}

/// Turns the `#[tool]` methods of an impl block into tools that share one value: a
/// database handle, an HTTP client, state the tools read and change.
///
/// ```
/// use std::collections::HashMap;
/// use std::sync::{Arc, Mutex};
///
/// use toolnexus::{pending, toolbox, Answer, Toolbox, ToolContext, ToolResult, Toolkit};
///
/// struct Shop {
///     stock: Mutex<HashMap<String, u32>>,
/// }
///
/// #[toolbox]
/// impl Shop {
///     /// How many of an item are in stock
///     #[tool]
///     async fn stock(&self, sku: String) -> ToolResult {
///         ToolResult::ok(self.count(&sku).to_string())
///     }
///
///     /// Reserves items; asks a human above 10
///     #[tool]
///     async fn reserve(&self, sku: String, qty: u32, answer: Option<&Answer>) -> ToolResult {
///         match answer {
///             None if qty > 10 => {
///                 return pending!(kind = "approval", prompt = format!("Reserve {qty} of {sku}?"))
///             }
///             Some(a) if !a.ok => return ToolResult::error("not approved"),
///             _ => {}
///         }
///         let mut stock = self.stock.lock().unwrap();
///         let have = stock.entry(sku).or_default();
///         if *have < qty {
///             return ToolResult::error(format!("only {have} left"));
///         }
///         *have -= qty;
///         ToolResult::ok(format!("reserved {qty}, {have} left"))
///     }
///
///     // No #[tool]: an ordinary method.
///     fn count(&self, sku: &str) -> u32 {
///         self.stock.lock().unwrap().get(sku).copied().unwrap_or(0)
///     }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let shop = Arc::new(Shop { stock: Mutex::new(HashMap::from([("a".to_owned(), 20)])) });
/// let tk = Toolkit::builder().tools(shop.clone().into_tools()).build().unwrap();
///
/// let args = serde_json::json!({"sku": "a", "qty": 3});
/// let done = tk.execute("reserve", args, ToolContext::default()).await;
/// assert_eq!(done.output, "reserved 3, 17 left");
/// assert_eq!(shop.count("a"), 17); // every tool, and the caller, share the one value
///
/// let args = serde_json::json!({"sku": "a", "qty": 12});
/// let parked = tk.execute("reserve", args, ToolContext::default()).await;
/// assert_eq!(ToolResult::pending_of(&parked).unwrap().prompt, "Reserve 12 of a?");
/// # });
/// ```
///
/// `Arc::new(value).into_tools()` (trait `toolnexus::Toolbox`, implemented here) gives one
/// tool per `#[tool]` method, in the order written, each holding a clone of the `Arc`;
/// register them with `Toolkit::builder().tools(..)`. The impl block stays as written
/// (minus the `#[tool]` and parameter attributes), so the methods remain callable.
///
/// # The methods
///
/// A `#[tool]` method follows every rule of a [`#[tool]`](macro@tool) fn: its name,
/// description and schema come from its signature and doc comment, with the same
/// `#[tool(name = "…", description = "…", struct_name = "…")]` options and `#[arg]`
/// descriptions; `Option<&Answer>`, `Option<Answered<T>>`, `&ToolContext` and `Ext<T>`
/// parameters are injected; arguments are decoded before the body runs, a panic becomes an error result,
/// and the future must be `Send`. On top of that:
///
/// - The receiver is `&self` (also written `&'a self` or `self: &Self`). A toolbox's tools
///   may run at the same time, so `&mut self` is a compile error: keep changing state
///   behind a `Mutex`, an `RwLock` or atomics. `self` by value is an error too (the value
///   lives in a shared `Arc`).
/// - An associated fn without `self` is a tool of the box that does not use the value.
/// - Methods without `#[tool]`, and other items, are left alone.
/// - Which `#[tool]` is ours: a macro cannot see what a name resolves to, so the rule is by
///   spelling. `#[tool]` and `#[tool(...)]` written bare, and `#[PATH::tool]` where `PATH`
///   is the runtime's path (`toolnexus`, its renamed name, or the `crate = "..."` option),
///   are taken; a `tool` attribute under any other path (`#[other_crate::tool]`) is left on
///   the method for its own macro. To put another crate's `tool` attribute on a toolbox
///   method, spell its path.
///
/// Each tool is a struct next to the impl, named by the rule of `#[tool]`, the
/// UpperCamelCase of the method's path (`Shop::stock` gives `ShopStock`; `struct_name`
/// overrides it; see [the struct's name](macro@tool#the-structs-name)), with the method's
/// visibility. It shares the value; `ShopStock::new(arc)` makes that tool alone, e.g. to
/// give an agent only some of the box.
///
/// # The impl block
///
/// It must be an inherent impl (`impl Shop`, not `impl Trait for Shop`) of a type that is
/// not generic over the impl (`impl Store<Postgres>` is fine, `impl<T> Store<T>` is not),
/// with at least one `#[tool]` method; each of these is a compile error otherwise. The
/// type must be `Send + Sync + 'static`, since its tools are shared across threads. Tool
/// names must differ within a box. `#[toolbox(crate = "path")]` names the runtime crate
/// when it is re-exported (see [`tool`](macro@tool#the-runtime-crates-name)).
///
/// `#[toolbox]`, on the impl, is expanded before the attributes of its methods and takes
/// their `#[tool]` over. Inside an impl without `#[toolbox]`, `#[tool]` does not compile;
/// on a method taking `self`, the error says to add `#[toolbox]`.
#[proc_macro_attribute]
pub fn toolbox(attr: TokenStream, item: TokenStream) -> TokenStream {
    toolbox::expand(attr.into(), item.into()).into()
}

/// The engine of the runtime's `pending!`: `__pending!(RUNTIME_PATH; ARGS)`. The runtime's
/// `macro_rules!` front passes its own `$crate`, so the generated code names the runtime
/// however the user reaches it (renamed, re-exported). Not public API.
#[doc(hidden)]
#[proc_macro]
pub fn __pending(input: TokenStream) -> TokenStream {
    suspend::with_runtime(input.into(), suspend::pending)
        .unwrap_or_else(suspend::expression_error)
        .into()
}

/// The engine of the runtime's `pending_all!`, like [`__pending!`](macro@__pending).
#[doc(hidden)]
#[proc_macro]
pub fn __pending_all(input: TokenStream) -> TokenStream {
    suspend::with_runtime(input.into(), suspend::pending_all)
        .unwrap_or_else(suspend::expression_error)
        .into()
}

/// The engine of the runtime's `auth_required!`, like [`__pending!`](macro@__pending).
#[doc(hidden)]
#[proc_macro]
pub fn __auth_required(input: TokenStream) -> TokenStream {
    suspend::with_runtime(input.into(), suspend::auth_required)
        .unwrap_or_else(suspend::expression_error)
        .into()
}
