//! A toolkit served over MCP: `approve_purchase` asks for an approval, `ship_order` for a
//! typed shipping form. Any MCP host can call them; their questions reach its user as
//! elicitations (or, on protocol 2026-07-28, as `input_required` rounds).
//!
//! ```sh
//! cargo run --example mcp_server                        # MCP over stdio (for a host's config)
//! cargo run --example mcp_server -- --http 127.0.0.1:8080   # streamable HTTP at /mcp
//! ```

mod export;
mod failure;
mod shop;

use failure::Failure;
use toolnexus_mcp::McpServer;

#[tokio::main]
async fn main() -> Result<(), Failure> {
    let _export = export::start()?;
    let server = McpServer::builder(shop::toolkit()).name("shop").build()?;
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => server.serve_stdio().await?,
        [flag, addr] if flag == "--http" => {
            let listener = tokio::net::TcpListener::bind(addr.as_str()).await?;
            // Standard output is the protocol on stdio; here it is free, and tells a
            // launcher where to connect.
            println!("listening on http://{}/mcp", listener.local_addr()?);
            let app = axum::Router::new().nest_service("/mcp", server.http_service());
            axum::serve(listener, app).await?;
        }
        _ => return Err("usage: mcp_server [--http ADDR]".into()),
    }
    Ok(())
}
