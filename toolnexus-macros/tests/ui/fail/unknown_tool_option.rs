use toolnexus::tool;

/// Gets the weather
#[tool(title = "Weather", name = 42)]
async fn get_weather(city: String) -> String {
    city
}

fn main() {}
