use serde_json::{json, Value};

use crate::tool::BoxFuture;
use crate::{Tool, ToolContext, ToolResult, Toolkit};

/// A hand-written tool whose `execute` panics before returning a future.
struct PanicsEagerly;

impl Tool for PanicsEagerly {
    fn name(&self) -> &str {
        "eager"
    }
    fn description(&self) -> &str {
        "Panics while starting"
    }
    fn input_schema(&self) -> &Value {
        static SCHEMA: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
        SCHEMA.get_or_init(|| json!({"type": "object"}))
    }
    fn execute(&self, _args: Value, _ctx: ToolContext) -> BoxFuture<'_, ToolResult> {
        panic!("no future for you")
    }
}

#[tokio::test]
async fn a_tool_panicking_before_its_future_is_an_error_result() {
    let tk = Toolkit::builder().tool(PanicsEagerly).build().unwrap();
    let result = tk.execute("eager", json!({}), ToolContext::default()).await;
    assert!(result.is_error && !result.is_pending());
    assert_eq!(
        result.output,
        "tool eager failed: panicked: no future for you"
    );
}
