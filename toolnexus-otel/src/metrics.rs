//! The GenAI client metrics (`gen_ai.client.token.usage`, `gen_ai.client.operation.duration`)
//! from the core's [`MetricEvent`]s.

use opentelemetry::metrics::{Histogram, Meter};
use opentelemetry::KeyValue;
use toolnexus::{MetricEvent, Style};

/// The semantic conventions' advised buckets for token counts: powers of four.
const TOKEN_BUCKETS: [f64; 14] = [
    1.0, 4.0, 16.0, 64.0, 256.0, 1024.0, 4096.0, 16384.0, 65536.0, 262144.0, 1048576.0, 4194304.0,
    16777216.0, 67108864.0,
];

/// The semantic conventions' advised buckets for an operation's seconds: doubling from 10 ms.
const DURATION_BUCKETS: [f64; 14] = [
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];

/// Records each model request's [`MetricEvent::Llm`] as the GenAI client metrics; other
/// events are ignored. Cheap to clone.
///
/// Hand it to a client with [`GenAiMetrics::callback`]:
/// `LlmClient::builder().on_metric(telemetry.gen_ai_metrics(Style::OpenAi).callback())`.
///
/// - `gen_ai.client.token.usage` (histogram, `{token}`): the input and the output tokens
///   of each successful request, told apart by `gen_ai.token.type` = `input` / `output`;
/// - `gen_ai.client.operation.duration` (histogram, `s`): every request, with `error.type`
///   (the HTTP status, or `_OTHER` when no complete response arrived) when it failed.
///
/// Both carry `gen_ai.operation.name` (`chat`), `gen_ai.provider.name` and
/// `gen_ai.request.model`.
#[derive(Clone, Debug)]
pub struct GenAiMetrics {
    instruments: Option<Instruments>,
    provider: &'static str,
}

#[derive(Clone, Debug)]
struct Instruments {
    tokens: Histogram<u64>,
    duration: Histogram<f64>,
}

impl GenAiMetrics {
    /// The instruments on `meter`, for a client speaking `style` (which names the
    /// provider: the event does not).
    pub fn new(meter: &Meter, style: Style) -> Self {
        let tokens = meter
            .u64_histogram("gen_ai.client.token.usage")
            .with_unit("{token}")
            .with_description("Number of input and output tokens used")
            .with_boundaries(TOKEN_BUCKETS.to_vec())
            .build();
        let duration = meter
            .f64_histogram("gen_ai.client.operation.duration")
            .with_unit("s")
            .with_description("GenAI operation duration")
            .with_boundaries(DURATION_BUCKETS.to_vec())
            .build();
        GenAiMetrics {
            instruments: Some(Instruments { tokens, duration }),
            provider: style.provider_name(),
        }
    }

    /// Records nothing: what a [`Telemetry`](crate::Telemetry) without a metrics endpoint
    /// hands out, so a host wires the callback the same way either way.
    pub fn disabled(style: Style) -> Self {
        GenAiMetrics {
            instruments: None,
            provider: style.provider_name(),
        }
    }

    /// Records `event` when it is a model request.
    pub fn record(&self, event: &MetricEvent) {
        let Some(instruments) = &self.instruments else {
            return;
        };
        let MetricEvent::Llm {
            model,
            status,
            ms,
            prompt_tokens,
            completion_tokens,
            ..
        } = event
        else {
            return;
        };
        let mut attributes = vec![
            KeyValue::new("gen_ai.operation.name", "chat"),
            KeyValue::new("gen_ai.provider.name", self.provider),
            KeyValue::new("gen_ai.request.model", model.clone()),
        ];
        match status {
            Some(200..=299) => {
                for (kind, count) in [("input", *prompt_tokens), ("output", *completion_tokens)] {
                    let mut with_type = attributes.clone();
                    with_type.push(KeyValue::new("gen_ai.token.type", kind));
                    instruments.tokens.record(count, &with_type);
                }
            }
            Some(code) => attributes.push(KeyValue::new("error.type", code.to_string())),
            None => attributes.push(KeyValue::new("error.type", "_OTHER")),
        }
        instruments.duration.record(ms / 1000.0, &attributes);
    }

    /// `self` as the closure [`LlmClientBuilder::on_metric`](toolnexus::LlmClientBuilder::on_metric)
    /// takes.
    pub fn callback(self) -> impl Fn(&MetricEvent) + Send + Sync + 'static {
        move |event| self.record(event)
    }
}
