//! A public tool in a module used from outside it, and a tool declared inside a fn body.
#![deny(warnings)]
use toolnexus::Tool;

mod tools {
    use toolnexus::tool;

    /// Says hello
    #[tool]
    pub async fn greet(name: String) -> String {
        format!("hello {name}")
    }
}

pub fn main() {
    /// Local tool
    #[toolnexus::tool]
    async fn local(n: u8) -> String {
        n.to_string()
    }

    let tools: Vec<Box<dyn Tool>> = vec![Box::new(tools::Greet), Box::new(Local)];
    assert_eq!(tools[0].name(), "greet");
    assert_eq!(tools[1].name(), "local");
}
