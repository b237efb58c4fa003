//! Listing and calling: the toolkit's declarations under their declared names, and tool failures
//! as error results rather than protocol errors.

use super::*;

#[tokio::test]
async fn lists_the_toolkits_declarations() {
    let human = Human::new(form_and_url(), []);
    let client = client(shop(), human, legacy()).await;
    let tools = client.list_all_tools().await.unwrap();
    let tk = shop::toolkit();
    assert_eq!(tools.len(), tk.len());
    for (listed, ours) in tools.iter().zip(tk.declarations()) {
        assert_eq!(listed.name, ours.name);
        assert_eq!(listed.description.as_deref(), Some(ours.description));
        assert_eq!(
            &Value::Object((*listed.input_schema).clone()),
            ours.input_schema
        );
    }
    let info = client.peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().unwrap().name, "shop");
}

/// Tools named as no provider accepts, with a raw schema: what a model would see of them
/// is what an MCP client sees and calls.
fn spaced_names() -> Toolkit {
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Args",
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"]
    });
    let weather = NativeTool::of(
        "get weather",
        "Current weather",
        schema.clone(),
        |args, _| async move { format!("sunny in {}", args["city"].as_str().unwrap_or("?")) },
    );
    let book = NativeTool::of(
        "book trip!",
        "Books a trip",
        schema,
        |args, ctx| async move {
            let city = args["city"].as_str().unwrap_or("?").to_owned();
            match ctx.answer {
                Some(a) if a.ok => ToolResult::ok(format!("booked {city}")),
                Some(_) => ToolResult::error("not booked"),
                None => ToolResult::pending(Request::new("approval", format!("Book {city}?"))),
            }
        },
    );
    Toolkit::builder().tool(weather).tool(book).build().unwrap()
}

#[tokio::test]
async fn tools_are_listed_and_called_by_their_declared_names() {
    let tk = spaced_names();
    let human = Human::new(form_and_url(), [Says::Accept(json!({}))]);
    let client = client(McpServer::new(tk.clone()), human, modern()).await;
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| &*t.name).collect();
    assert_eq!(names, ["get_weather", "book_trip_"]);
    for (listed, ours) in tools.iter().zip(tk.declarations()) {
        assert_eq!(listed.name, ours.name);
        let schema = Value::Object((*listed.input_schema).clone());
        assert_eq!(&schema, ours.input_schema);
        assert_eq!(schema.get("$schema"), None, "{schema}");
    }

    let weather = ask(&client, "get_weather", json!({"city": "Paris"})).await;
    assert_eq!(weather, (false, "sunny in Paris".to_owned()));
    // A suspension's round trip is sealed for, and retried under, the declared name.
    let booked = ask(&client, "book_trip_", json!({"city": "Rome"})).await;
    assert_eq!(booked, (false, "booked Rome".to_owned()));
}

#[tokio::test]
async fn tool_failures_are_error_results_not_protocol_errors() {
    let client = client(shop(), Human::new(form_and_url(), []), legacy()).await;
    let bad = ask(&client, "ship_order", json!({"order": "seven"})).await;
    let (is_error, message) = bad;
    assert!(is_error && message.contains("ship_order"), "{message}");
    let unknown = ask(&client, "teleport", json!({})).await;
    assert!(unknown.0);
}
