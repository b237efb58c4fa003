//! A [`Toolkit`]: the set of tools offered to a model, with their declarations cached per
//! [`Style`] (the provider modules say what a declaration looks like) and per export format.
//! The approval gate in front of its tools is [`gate`]'s.

pub(crate) mod gate;
mod guarded;
mod nullable;
mod schema;
mod settle;
#[cfg(test)]
mod tests;

pub(crate) use gate::default_prompt;
pub use gate::Approval;
pub(crate) use nullable::{non_null_branches, non_null_types};
pub(crate) use schema::normalize as normalize_schema;

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::sync::{Arc, OnceLock};

use futures::future::Either;
use serde_json::value::RawValue;
use serde_json::{json, Value};

use crate::{tool_args, Style, Tool, ToolContext, ToolResult};
use guarded::Guarded;

/// A registration problem.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolkitError {
    /// Two tools share one (sanitized) name.
    #[error("two tools are named `{0}`; tool names must be unique within a toolkit")]
    DuplicateName(String),
    /// A tool's name is empty.
    #[error("a tool has an empty name")]
    EmptyName,
    /// A tool asks for typed answers of a type that cannot be a form (see
    /// [`Tool::answer_schema`]), so no host could ever answer it.
    #[error("the tool `{tool}` cannot ask for its answers: {reason}")]
    AnswerForm {
        /// The tool's (sanitized) name.
        tool: String,
        /// Why its answer type is not a form, naming the field at fault.
        reason: String,
    },
    /// An [`Approval`] names a tool the toolkit does not have (a prefix pattern, one that no
    /// tool's name starts with), so it would never gate anything.
    #[error("the approval for `{0}` matches no tool of this toolkit")]
    UnknownApproval(String),
    /// An [`Approval`]'s [`responders`](Approval::responders) are empty or name someone
    /// by an empty name, so nobody could answer what it asks.
    #[error(
        "the approval for `{0}` names no one who could answer (an empty list or an empty name); \
         name people by id and groups as `group:NAME`, or leave `responders` out to let anyone answer"
    )]
    NoResponders(String),
    /// An [`Approval`]'s [`quorum`](Approval::quorum) is 0, or more people than its
    /// responders name when they name no group, so it could never be reached.
    #[error(
        "the approval for `{tools}` needs a quorum of {quorum} that could never be reached; \
         a quorum is at least 1 and, when responders name only people, at most how many they are"
    )]
    Quorum {
        /// The approval's tool patterns, comma-separated.
        tools: String,
        /// The quorum it asked for.
        quorum: u32,
    },
}

/// The tools offered to a model, in registration order.
///
/// ```
/// use serde_json::json;
/// use toolnexus::{NativeTool, Style, Toolkit};
///
/// let echo = NativeTool::of("echo", "Echoes its input",
///     json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
///     |args, _ctx| async move { args["text"].as_str().unwrap_or_default().to_owned() });
/// let tk = Toolkit::builder().tool(echo).build().unwrap();
/// assert_eq!(tk.declarations_for(Style::OpenAi)[0]["function"]["name"], "echo");
/// assert!(tk.get("echo").is_some());
/// ```
#[derive(Clone)]
pub struct Toolkit {
    inner: Arc<Inner>,
}

/// Up to this many tools, a name is found by comparing it with each: cheaper than hashing
/// it, and a lookup happens several times per call.
const LINEAR_LOOKUP: usize = 16;

struct Inner {
    /// The tools as registered, each behind its guard.
    guarded: Vec<Arc<Guarded>>,
    /// The same, as [`Toolkit::tools`] lends them.
    tools: Vec<Arc<dyn Tool>>,
    names: Vec<String>,
    index: HashMap<String, usize>,
    schemas: Vec<Value>,
    /// The toolkit's approval rules, and per tool the indexes of those that cover it.
    approvals: Vec<Approval>,
    gated: Vec<Vec<usize>>,
    /// What checks the signatures of ruled approvals, when the host gave one.
    verifier: Option<Arc<dyn crate::receipt::VerifyReceipt>>,
    /// Per [`Style::index`].
    declared: [OnceLock<Declared>; Style::COUNT],
    gemini: OnceLock<Vec<Value>>,
}

/// One style's declarations, built once per toolkit.
struct Declared {
    /// The body's `tools` value.
    list: Vec<Value>,
    /// The same, pre-serialized, so a request body embeds them without re-serializing
    /// every turn; `None` when there are no tools.
    json: Option<Box<RawValue>>,
}

/// One tool as a [`Toolkit`] declares it (see [`Toolkit::declarations`]).
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct ToolDeclaration<'a> {
    /// The name the model and MCP clients call it by, sanitized to `[a-zA-Z0-9_-]`.
    pub name: &'a str,
    /// What it does, for the model.
    pub description: &'a str,
    /// Its arguments: a self-contained object schema (`type`, `properties`, `required`),
    /// without `$schema`/`title` and with `$defs` inlined.
    pub input_schema: &'a Value,
    /// The schema of what it returns, when it declares one ([`Tool::output_schema`]).
    pub output_schema: Option<&'a Value>,
}

impl fmt::Debug for Toolkit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Toolkit")
            .field("tools", &self.inner.names)
            .finish()
    }
}

impl Default for Toolkit {
    fn default() -> Self {
        Toolkit::empty()
    }
}

/// Collects tools for a [`Toolkit`].
#[derive(Default)]
pub struct ToolkitBuilder {
    tools: Vec<Arc<dyn Tool>>,
    approvals: Vec<Approval>,
    verifier: Option<Arc<dyn crate::receipt::VerifyReceipt>>,
}

impl fmt::Debug for ToolkitBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.tools.iter().map(|t| t.name()).collect();
        f.debug_struct("ToolkitBuilder")
            .field("tools", &names)
            .field("approvals", &self.approvals)
            .field("verifies_receipts", &self.verifier.is_some())
            .finish()
    }
}

impl ToolkitBuilder {
    /// Adds one tool (a generated tool struct, a [`NativeTool`](crate::NativeTool), an
    /// `Arc<dyn Tool>`, …).
    pub fn tool(mut self, tool: impl Tool) -> Self {
        self.tools.push(into_arc(tool));
        self
    }

    /// Adds many tools, e.g. the tools of a [`Toolbox`](crate::Toolbox).
    pub fn tools(mut self, tools: impl IntoIterator<Item = Arc<dyn Tool>>) -> Self {
        self.tools.extend(tools);
        self
    }

    /// Makes the tools `approval` names ask a person before they run (see [`Approval`]).
    /// Rules add up: a call asks when any rule covering its tool asks, with the first such
    /// rule's prompt; a tool's own `#[tool(approval = …)]` comes first.
    pub fn approval(mut self, approval: Approval) -> Self {
        self.approvals.push(approval);
        self
    }

    /// Checks names, answer forms and approvals, and builds the toolkit.
    pub fn build(self) -> Result<Toolkit, ToolkitError> {
        let mut names = Vec::with_capacity(self.tools.len());
        let mut index = HashMap::with_capacity(self.tools.len());
        for (i, tool) in self.tools.iter().enumerate() {
            let name = sanitize_name(tool.name());
            if name.is_empty() {
                return Err(ToolkitError::EmptyName);
            }
            if index.insert(name.clone(), i).is_some() {
                return Err(ToolkitError::DuplicateName(name));
            }
            if let Some(Err(reason)) = tool.answer_schema() {
                return Err(ToolkitError::AnswerForm {
                    tool: name,
                    reason: reason.to_owned(),
                });
            }
            names.push(name);
        }
        for approval in &self.approvals {
            if let Some(responders) = &approval.responders {
                let nameless = |r: &String| r.is_empty() || r == "group:";
                if responders.is_empty() || responders.iter().any(nameless) {
                    let patterns = approval.patterns.join(", ");
                    return Err(ToolkitError::NoResponders(patterns));
                }
            }
            if let Some(n) = approval.quorum {
                let people_only = approval
                    .responders
                    .as_ref()
                    .filter(|list| list.iter().all(|r| !r.starts_with("group:")));
                let short = people_only.is_some_and(|list| list.len() < n as usize);
                if n == 0 || short {
                    return Err(ToolkitError::Quorum {
                        tools: approval.patterns.join(", "),
                        quorum: n,
                    });
                }
            }
            for pattern in &approval.patterns {
                if !names.iter().any(|n| Approval::matches(pattern, n)) {
                    return Err(ToolkitError::UnknownApproval(pattern.clone()));
                }
            }
        }
        let gated = names
            .iter()
            .map(|n| {
                let covering = self.approvals.iter().enumerate();
                covering
                    .filter(|(_, a)| a.covers(n))
                    .map(|(i, _)| i)
                    .collect()
            })
            .collect();
        let schemas = self
            .tools
            .iter()
            .map(|t| schema::normalize(t.input_schema()))
            .collect();
        let guarded: Vec<Arc<Guarded>> = self
            .tools
            .into_iter()
            .zip(&names)
            .map(|(tool, name)| Arc::new(Guarded::new(name.clone(), tool)))
            .collect();
        let tools = guarded
            .iter()
            .map(|g| Arc::clone(g) as Arc<dyn Tool>)
            .collect();
        Ok(Toolkit {
            inner: Arc::new(Inner {
                guarded,
                tools,
                names,
                index,
                schemas,
                approvals: self.approvals,
                gated,
                verifier: self.verifier,
                declared: Default::default(),
                gemini: OnceLock::new(),
            }),
        })
    }
}

/// Avoids wrapping an `Arc<dyn Tool>` in a second `Arc`.
fn into_arc<T: Tool>(tool: T) -> Arc<dyn Tool> {
    let mut slot = Some(tool);
    if let Some(arc) = (&mut slot as &mut dyn std::any::Any).downcast_mut::<Option<Arc<dyn Tool>>>()
    {
        if let Some(arc) = arc.take() {
            return arc;
        }
    }
    match slot {
        Some(tool) => Arc::new(tool),
        None => unreachable!("the slot is only emptied when it held an Arc<dyn Tool>"),
    }
}

/// A style's `tools` value as JSON text.
fn pre_serialize(declarations: &[Value]) -> Option<Box<RawValue>> {
    // JSON values always serialize (their keys are strings), so this never drops tools.
    serde_json::value::to_raw_value(declarations).ok()
}

/// Replaces every character outside `[a-zA-Z0-9_-]` with `_`, as every provider requires.
pub(crate) fn sanitize_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

impl Toolkit {
    /// Starts a toolkit.
    pub fn builder() -> ToolkitBuilder {
        ToolkitBuilder::default()
    }

    /// A toolkit with no tools (the model is then called without any).
    pub fn empty() -> Self {
        // An empty builder cannot fail.
        match ToolkitBuilder::default().build() {
            Ok(tk) => tk,
            Err(_) => unreachable!("an empty toolkit has no names to clash"),
        }
    }

    /// The tools, in registration order, each behind the toolkit's guard: a panic in a call
    /// made through it is an error result, as in [`execute`](Self::execute).
    pub fn tools(&self) -> &[Arc<dyn Tool>] {
        &self.inner.tools
    }

    /// Whether there are no tools.
    pub fn is_empty(&self) -> bool {
        self.inner.tools.is_empty()
    }

    /// Number of tools.
    pub fn len(&self) -> usize {
        self.inner.tools.len()
    }

    /// The tool the model knows as `name` (names are compared after sanitizing).
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.position(name).map(|i| &self.inner.tools[i])
    }

    fn position(&self, name: &str) -> Option<usize> {
        let found = if self.inner.names.len() <= LINEAR_LOOKUP {
            self.inner.names.iter().position(|n| n == name)
        } else {
            self.inner.index.get(name).copied()
        };
        // A name the model sent unsanitized still finds its tool.
        found.or_else(|| self.inner.index.get(&sanitize_name(name)).copied())
    }

    /// The name a toolkit declares a tool named `name` under, and the model calls it by:
    /// every character outside `[a-zA-Z0-9_-]` replaced with `_`, as every provider
    /// requires. A host that names tools itself (an MCP client prefixing a server's tools)
    /// uses it to know the names before it registers them.
    ///
    /// ```
    /// use toolnexus::Toolkit;
    ///
    /// assert_eq!(Toolkit::declared_name("get weather.v2"), "get_weather_v2");
    /// ```
    pub fn declared_name(name: &str) -> String {
        sanitize_name(name)
    }

    /// The declared (sanitized) names, in registration order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.inner.names.iter().map(String::as_str)
    }

    /// Runs one call. An unknown name, arguments that are not a JSON object and a panicking
    /// tool all come back as error results, never as a panic.
    ///
    /// The tool is found, and its arguments checked, when this is called; the future is the
    /// tool's own, guarded. (An `async fn` would hold the arguments and the context twice
    /// while the tool runs.)
    pub fn execute(
        &self,
        name: &str,
        args: Value,
        ctx: ToolContext,
    ) -> impl Future<Output = ToolResult> + '_ + use<'_> {
        let refused = |result| Either::Left(std::future::ready(result));
        let Some(i) = self.position(name) else {
            return refused(ToolResult::error(if self.inner.names.is_empty() {
                format!("unknown tool `{name}`: this toolkit has no tools")
            } else {
                format!(
                    "unknown tool `{name}`; available tools: {}",
                    self.inner.names.join(", ")
                )
            }));
        };
        let name = &self.inner.names[i];
        match tool_args::as_object(name, args) {
            Ok(map) => Either::Right(self.inner.guarded[i].call(Value::Object(map), ctx)),
            Err(message) => refused(ToolResult::error(message)),
        }
    }

    /// Every tool as this toolkit declares it, in registration order: what the providers
    /// wrap in their own shapes and what an MCP server lists. Names are sanitized and input
    /// schemas normalized once, when the toolkit is built.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolnexus::{NativeTool, Toolkit};
    ///
    /// let raw = json!({"$schema": "https://json-schema.org/draft/2020-12/schema",
    ///                  "type": "object", "properties": {"city": {"type": "string"}}});
    /// let tk = Toolkit::builder()
    ///     .tool(NativeTool::of("get weather", "Current weather", raw, |_args, _ctx| async { "sunny" }))
    ///     .build()
    ///     .unwrap();
    /// let declared = tk.declarations().next().unwrap();
    /// assert_eq!(declared.name, "get_weather");
    /// assert_eq!(declared.description, "Current weather");
    /// assert_eq!(declared.input_schema.get("$schema"), None);
    /// assert_eq!(declared.input_schema["required"], json!([]));
    /// assert_eq!(declared.output_schema, None);
    /// ```
    pub fn declarations(&self) -> impl ExactSizeIterator<Item = ToolDeclaration<'_>> + '_ {
        let inner = &*self.inner;
        inner
            .tools
            .iter()
            .zip(&inner.names)
            .zip(&inner.schemas)
            .map(|((tool, name), input_schema)| ToolDeclaration {
                name,
                description: tool.description(),
                input_schema,
                output_schema: tool.output_schema(),
            })
    }

    /// The declarations in one shape: each tool written by `declare`, the list then
    /// wrapped by `wrap` (most shapes take it as it is).
    fn shaped(
        &self,
        declare: impl Fn(&ToolDeclaration<'_>) -> Value,
        wrap: impl FnOnce(Vec<Value>) -> Vec<Value>,
    ) -> Vec<Value> {
        wrap(self.declarations().map(|d| declare(&d)).collect())
    }

    /// `style`'s declarations, built once per toolkit.
    fn declared(&self, style: Style) -> &Declared {
        self.inner.declared[style.index()].get_or_init(|| {
            let provider = style.provider();
            let list = self.shaped(|d| provider.declare(d), |l| provider.tools_value(l));
            // Providers want no `tools` key at all rather than an empty one.
            let json = if self.is_empty() {
                None
            } else {
                pre_serialize(&list)
            };
            Declared { list, json }
        })
    }

    /// `style`'s declarations as one JSON array, for a request body; `None` without tools.
    pub(crate) fn declarations_json(&self, style: Style) -> Option<&RawValue> {
        self.declared(style).json.as_deref()
    }

    /// The declarations in `style`'s shape, for a host that calls the provider itself:
    ///
    /// - [`Style::OpenAi`]: `{"type":"function","function":{name, description, parameters}}`
    ///   per tool;
    /// - [`Style::Anthropic`]: `{name, description, input_schema}` per tool;
    /// - [`Style::Responses`]: `{"type":"function", name, description, parameters,
    ///   "strict": false}` per tool;
    /// - [`Style::Gemini`]: one element `{"functionDeclarations":[{name, description,
    ///   parameters}]}`, with schemas converted to Gemini's OpenAPI subset (`type: ["T",
    ///   "null"]` becomes `type: "T", nullable: true`).
    ///
    /// Each list is built once per toolkit.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolnexus::{NativeTool, Style, Toolkit};
    ///
    /// let echo = NativeTool::of("echo", "Echoes its input",
    ///     json!({"type": "object", "properties": {"text": {"type": ["string", "null"]}}}),
    ///     |args, _ctx| async move { args["text"].as_str().unwrap_or_default().to_owned() });
    /// let tk = Toolkit::builder().tool(echo).build().unwrap();
    /// assert_eq!(tk.declarations_for(Style::OpenAi)[0]["function"]["name"], "echo");
    /// assert_eq!(tk.declarations_for(Style::Anthropic)[0]["input_schema"]["type"], "object");
    /// let gemini = tk.declarations_for(Style::Gemini);
    /// let text = &gemini[0]["functionDeclarations"][0]["parameters"]["properties"]["text"];
    /// assert_eq!((&text["type"], &text["nullable"]), (&json!("string"), &json!(true)));
    /// ```
    pub fn declarations_for(&self, style: Style) -> Vec<Value> {
        match style {
            // Not the client's own Gemini declarations, which send plain JSON Schema as
            // `parametersJsonSchema`: this export keeps the `parameters` form, which only
            // takes the OpenAPI subset.
            Style::Gemini => self
                .inner
                .gemini
                .get_or_init(|| {
                    self.shaped(
                        |d| json!({"name": d.name, "description": d.description, "parameters": schema::to_gemini(d.input_schema)}),
                        |l| Style::Gemini.provider().tools_value(l),
                    )
                })
                .clone(),
            style => self.declared(style).list.clone(),
        }
    }

    /// Shorthand for [`declarations_for`](Self::declarations_for)`(Style::OpenAi)`.
    pub fn to_openai(&self) -> Vec<Value> {
        self.declarations_for(Style::OpenAi)
    }

    /// Shorthand for [`declarations_for`](Self::declarations_for)`(Style::Anthropic)`.
    pub fn to_anthropic(&self) -> Vec<Value> {
        self.declarations_for(Style::Anthropic)
    }

    /// Shorthand for [`declarations_for`](Self::declarations_for)`(Style::Gemini)`.
    pub fn to_gemini(&self) -> Vec<Value> {
        self.declarations_for(Style::Gemini)
    }
}
