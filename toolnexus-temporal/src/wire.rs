//! What crosses Temporal: the workflow's input, a step activity's input, and what a run
//! carries into the execution it continues as. Every field is JSON, so any SDK's client
//! starts a run and reads its result without this crate.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use temporalio_common::data_converters::{
    ErasedSerdePayloadConverter, GenericPayloadConverter, PayloadConversionError,
    SerializationContext, TemporalDeserializable,
};
use temporalio_common::protos::temporal::api::common::v1::Payload;
use toolnexus::{Answer, Message, Request, Step, StepKey};

use crate::codec::UNENCRYPTED;
use crate::progress::Progress;

/// The `answer` update's input: an [`Answer`]'s JSON, as any client sends it.
///
/// On a worker with a payload codec ([`Codec`](crate::Codec)), an input that arrived
/// unencrypted is marked so when it is decoded, and the workflow refuses it before reading
/// it: only a client holding the key (the inbox's forwarder beside every worker is one)
/// answers a run whose history is encrypted.
#[derive(Debug, Clone, PartialEq)]
pub struct AnswerInput {
    answer: Value,
    unencrypted: bool,
}

impl AnswerInput {
    /// The input of `answer`'s JSON.
    pub fn new(answer: Value) -> Self {
        AnswerInput {
            answer,
            unencrypted: false,
        }
    }

    /// The answer's JSON, unless it arrived unencrypted on a worker with a codec: then why
    /// it is refused.
    pub(crate) fn trusted(&self) -> Result<&Value, &'static str> {
        if self.unencrypted {
            return Err(
                "the answer arrived unencrypted, and this worker encrypts its runs with a \
                 payload codec key: an answer in clear could come from anyone who reaches the \
                 namespace, so it is refused; send it with a client that has the key, or \
                 answer on the inbox",
            );
        }
        Ok(&self.answer)
    }
}

impl From<Value> for AnswerInput {
    fn from(answer: Value) -> Self {
        AnswerInput::new(answer)
    }
}

impl Serialize for AnswerInput {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.answer.serialize(serializer)
    }
}

impl TemporalDeserializable for AnswerInput {
    fn from_serde(
        _: &dyn ErasedSerdePayloadConverter,
        ctx: &SerializationContext<'_>,
        payload: Payload,
    ) -> Result<Self, PayloadConversionError> {
        Self::from_payload(ctx, payload)
    }

    fn from_payload(
        ctx: &SerializationContext<'_>,
        payload: Payload,
    ) -> Result<Self, PayloadConversionError> {
        let unencrypted = payload.metadata.contains_key(UNENCRYPTED);
        let answer = ctx.converter.from_payload::<Value>(ctx, payload)?;
        Ok(AnswerInput {
            answer,
            unencrypted,
        })
    }
}

/// The `AgentRun` workflow's input: `{"prompt": "…"}`. A run that continued as new carries
/// what it had done in `carry`, which a client never sets.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunInput {
    /// The user's message the run answers.
    pub prompt: String,
    /// What an earlier execution of the same run hands over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) carry: Option<Carry>,
}

impl RunInput {
    /// A new run of `prompt`.
    pub fn new(prompt: impl Into<String>) -> Self {
        RunInput {
            prompt: prompt.into(),
            carry: None,
        }
    }
}

/// What a run hands to the execution it continues as, at a wait: its id, where it halted,
/// what it has done so far (so the result it ends with covers the whole run), and the
/// requests already answered (so a repeated answer is still refused).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Carry {
    /// The run's id (its tools' idempotency keys derive from it).
    pub(crate) run: String,
    /// Where it halted.
    pub(crate) halted: Halted,
    /// What it has done so far.
    pub(crate) progress: Progress,
    /// Every request answered so far.
    #[serde(default)]
    pub(crate) answered: Vec<String>,
}

/// A halted stretch: its transcript and the requests it waits on.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Halted {
    /// The halted transcript.
    pub(crate) messages: Vec<Message>,
    /// The requests it waits on, in call order.
    pub(crate) waiting: Vec<Request>,
}

/// Where a stretch of the loop starts: the first prompt, or a halted transcript and the
/// answers that take it up again.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "from", rename_all = "snake_case")]
pub(crate) enum Start {
    /// A new run of `prompt`.
    Prompt {
        /// The user's message.
        prompt: String,
    },
    /// A halted run taken up with answers.
    Answers {
        /// The halted transcript.
        messages: Vec<Message>,
        /// The answers it is taken up with.
        answers: Vec<Answer>,
    },
}

/// A step activity's input: the stretch to replay, where its steps so far are, and the
/// one to make. `pub` only because the `#[activities]` macro puts it in a public signature;
/// the crate does not export it.
///
/// The steps made so far are carried in `made` only while together they are small (a few
/// kilobytes): past that, each is in the run's history already, as the result of the
/// activity that made it, and the activity reads them there (every step activity scheduled
/// after event `since`), so no input grows with the stretch. A stretch's first step, asked
/// for before any other is made, carries the empty list.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StepInput {
    /// The run's id.
    pub(crate) run: String,
    /// Where the stretch starts.
    pub(crate) start: Start,
    /// The last history event before the stretch's first step: its steps are the step
    /// activities scheduled after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) since: Option<i64>,
    /// The steps the stretch has made, replayed without I/O, when the input carries them
    /// (no `since`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) made: Vec<(StepKey, Step)>,
    /// The step to make.
    pub(crate) target: StepKey,
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use temporalio_common::data_converters::{
        PayloadCodec, PayloadConverter, SerializationContextData, WorkflowSerializationContext,
    };

    use super::*;
    use crate::Codec;

    #[tokio::test]
    async fn an_answer_that_arrived_unencrypted_is_refused_before_it_is_read() {
        let codec = Codec::new(&[7; 32]).unwrap();
        let converter = PayloadConverter::default();
        let data = SerializationContextData::Workflow(WorkflowSerializationContext::new());
        let ctx = SerializationContext::new(&data, &converter);
        let answer = json!({"id": "r1", "ok": true});
        let clear = converter.to_payload(&ctx, &answer).unwrap();
        let read = |payloads: Vec<Payload>| -> AnswerInput {
            converter.from_payloads(&ctx, payloads).unwrap()
        };

        let opened = codec.decode(&data, vec![clear.clone()]).await.unwrap();
        let why = read(opened).trusted().unwrap_err();
        assert!(why.contains("unencrypted"), "{why}");

        let sealed = codec.encode(&data, vec![clear.clone()]).await.unwrap();
        let opened = codec.decode(&data, sealed).await.unwrap();
        assert_eq!(read(opened).trusted(), Ok(&answer));

        // Without a codec nothing is marked: the worker reads answers as they come.
        assert_eq!(read(vec![clear]).trusted(), Ok(&answer));
    }

    #[test]
    fn a_step_input_an_older_worker_scheduled_is_read_with_the_steps_it_carries() {
        // As tests/histories/approve.json's second step was scheduled: the stretch's steps
        // in the input, no `since`.
        let older = json!({
            "run": "approve/01a2",
            "start": {"from": "prompt", "prompt": "buy a gpu"},
            "made": [[{"turn": "a877"}, {"step": "reply", "text": "", "calls": [
                {"id": "call_0", "name": "purchase", "args": {"item": "gpu"}}
            ], "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}]],
            "target": {"turn": "a877", "call": "call_0"}
        });
        let input: StepInput = serde_json::from_value(older).unwrap();
        assert_eq!(input.since, None);
        assert_eq!(input.made.len(), 1);

        // A new input names where the stretch's steps are, and carries none of them.
        let newer = StepInput {
            since: Some(4),
            made: Vec::new(),
            ..input
        };
        let written = serde_json::to_value(&newer).unwrap();
        assert_eq!(written["since"], 4);
        assert!(written.get("made").is_none(), "{written}");
    }
}
