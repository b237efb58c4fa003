#![no_main]
//! Argument decoding: any JSON value a model sends, given to `Args::take` for many
//! parameter types and to `Toolkit::execute` on a native and a generated-style tool.

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use toolnexus::{NativeTool, ToolContext, Toolkit};
use toolnexus_fuzz::{block_on, take_each, Order};

fn toolkit() -> &'static Toolkit {
    static TK: OnceLock<Toolkit> = OnceLock::new();
    TK.get_or_init(|| {
        let echo = NativeTool::of(
            "echo",
            "Echoes its arguments",
            serde_json::json!({"type": "object", "properties": {}}),
            |args: Value, _ctx: ToolContext| async move { args.to_string() },
        );
        Toolkit::builder()
            .tool(echo)
            .tool(Order)
            .build()
            .expect("distinct names")
    })
}

fuzz_target!(|data: &[u8]| {
    // The bytes as JSON text, and the bytes as the recipe of argument-shaped JSON.
    if let Ok(args) = serde_json::from_slice::<Value>(data) {
        decode(&args);
    }
    if let Some(args) = toolnexus_fuzz::shaped_json(data) {
        decode(&args);
    }
});

fn decode(args: &Value) {
    take_each(args);
    let tk = toolkit();
    for name in ["echo", "order", "missing tool"] {
        let result = block_on(tk.execute(name, args.clone(), ToolContext::default()));
        assert!(!result.is_pending());
        if !(args.is_object() || args.is_null()) {
            assert!(result.is_error, "{name} ran on {args}");
        }
    }
}
