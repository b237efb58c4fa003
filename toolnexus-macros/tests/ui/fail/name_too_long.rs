use toolnexus::tool;

/// Named past what providers accept
#[tool(name = "a_tool_name_that_goes_on_and_on_well_past_the_sixty_four_characters_allowed")]
async fn long_name(city: String) -> String {
    city
}

/// A fn whose own name is too long to be a tool's
#[tool]
async fn fetch_the_current_weather_report_for_a_city_with_every_detail_known(city: String) -> String {
    city
}

fn main() {}
