//! Elicitation: typed forms filled by rmcp's own loop, forms while the call is held open, logins
//! as URL elicitations, expiry, and clients that cannot elicit.

use super::*;

#[tokio::test]
async fn on_2026_07_28_rmcps_own_loop_fills_the_typed_form() {
    let human = Human::new(form_and_url(), [Says::Accept(paris())]);
    let client = client(shop(), human.clone(), modern()).await;
    let result = ask(&client, "ship_order", json!({"order": 7})).await;
    assert_eq!(
        result,
        (false, "order 7 ships to 75001 Paris, express".to_owned())
    );
    let asked = human.asked();
    let ElicitRequestParams::FormElicitationParams {
        requested_schema, ..
    } = &asked[0]
    else {
        panic!("a form")
    };
    let schema = serde_json::to_value(requested_schema).unwrap();
    assert_eq!(schema["properties"]["express"]["type"], "boolean");
    assert_eq!(schema["required"], json!(["city", "zip", "express"]));
}

#[tokio::test]
async fn before_2026_the_call_is_held_open_for_a_form_elicitation() {
    let human = Human::new(
        form_and_url(),
        [
            Says::Accept(json!({})),
            Says::Decline,
            Says::Accept(paris()),
        ],
    );
    let client = client(shop(), human.clone(), legacy()).await;
    let approved = ask(&client, "approve_purchase", json!({"item": "gpu"})).await;
    assert_eq!(approved, (false, "approved: gpu".to_owned()));
    let declined = ask(&client, "approve_purchase", json!({"item": "yacht"})).await;
    assert_eq!(
        declined,
        (
            true,
            "declined/expired: Approve purchase of yacht? (reason: declined)".to_owned()
        )
    );
    let shipped = ask(&client, "ship_order", json!({"order": 7})).await;
    assert_eq!(
        shipped,
        (false, "order 7 ships to 75001 Paris, express".to_owned())
    );
    assert_eq!(human.asked().len(), 3);
}

#[tokio::test]
async fn a_login_with_a_url_is_a_url_elicitation() {
    let tk = Toolkit::builder().tool(SignIn).build().unwrap();
    let human = Human::new(form_and_url(), [Says::Accept(json!({}))]);
    let client = client(McpServer::new(tk), human.clone(), legacy()).await;
    let result = ask(&client, "sign_in", json!({})).await;
    assert_eq!(result, (false, "signed in".to_owned()));
    let ElicitRequestParams::UrlElicitationParams {
        url,
        elicitation_id,
        ..
    } = &human.asked()[0]
    else {
        panic!("a URL elicitation")
    };
    assert_eq!(url, "https://shop.example/login");
    assert_eq!(elicitation_id.len(), 36, "the request id: {elicitation_id}");
}

#[tokio::test]
async fn an_unanswered_elicitation_expires() {
    let server = McpServer::builder(shop::toolkit())
        .elicitation_timeout(Duration::from_millis(200))
        .build()
        .unwrap();
    let human = Human::new(form_and_url(), [Says::Stall]);
    let client = client(server, human, legacy()).await;
    let result = ask(&client, "approve_purchase", json!({"item": "gpu"})).await;
    assert_eq!(
        result,
        (
            true,
            "declined/expired: Approve purchase of gpu? (reason: expired)".to_owned()
        )
    );
}

#[tokio::test]
async fn a_client_without_elicitation_is_told_what_the_tool_needs() {
    for lifecycle in [legacy(), modern()] {
        let human = Human::new(no_elicitation(), []);
        let client = client(shop(), human, lifecycle).await;
        let result = ask(&client, "approve_purchase", json!({"item": "gpu"})).await;
        assert_eq!(
            result,
            (
                true,
                "`approve_purchase` needs approval: Approve purchase of gpu?, but this MCP \
                 client does not accept form elicitation"
                    .to_owned()
            )
        );
    }
}
