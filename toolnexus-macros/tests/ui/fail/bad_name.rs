use toolnexus::tool;

/// Gets the weather
#[tool(name = "get weather")]
async fn get_weather(city: String) -> String {
    city
}

/// Gets the time
#[tool(name = "")]
async fn get_time(city: String) -> String {
    city
}

fn main() {}
