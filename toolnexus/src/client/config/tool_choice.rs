//! [`ToolChoice`]: whether, and which, tools the model must call on a turn — one closed set,
//! encoded by each provider module in its own shape.

/// Whether the model may, must or must not call tools, or must call one tool.
///
/// Set per client with [`LlmClientBuilder::tool_choice`](crate::LlmClientBuilder::tool_choice)
/// or per run with [`RunOptions::tool_choice`](crate::RunOptions::tool_choice). It applies to
/// every turn of the run, so [`Required`](Self::Required) or [`Tool`](Self::Tool) leaves the
/// model no way to give a final answer before `max_turns`: use them for one-turn runs.
/// Nothing is sent when the turn offers no tools.
///
/// | choice | OpenAI `tool_choice` | Anthropic `tool_choice` |
/// |---|---|---|
/// | `Auto` | `"auto"` | `{"type": "auto"}` |
/// | `None` | `"none"` | `{"type": "none"}` |
/// | `Required` | `"required"` | `{"type": "any"}` |
/// | `Tool(name)` | `{"type": "function", "function": {"name": name}}` | `{"type": "tool", "name": name}` |
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ToolChoice {
    /// The model decides (the providers' default).
    Auto,
    /// The model must not call tools.
    None,
    /// The model must call at least one tool.
    Required,
    /// The model must call this tool; a name the run's toolkit does not have is
    /// [`ClientError::InvalidOptions`](crate::ClientError::InvalidOptions) before any request.
    Tool(String),
}

impl ToolChoice {
    /// The model must call the tool `name`.
    pub fn tool(name: impl Into<String>) -> Self {
        ToolChoice::Tool(name.into())
    }
}
