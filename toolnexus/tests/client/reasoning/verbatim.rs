//! Reasoning state sent back verbatim with the next request, through a halt and JSON, and left out
//! when a transcript continues on the other style.

use super::*;

#[tokio::test]
async fn a_reasoning_tool_turn_goes_back_verbatim_and_stays_out_of_the_text() {
    for (style, streamed) in CASES {
        let case = format!("{style:?}, streamed: {streamed}");
        let mock = MockLlm::start([
            echo_turn(),
            Reply::text("done").with_reasoning(AFTERTHOUGHT),
        ])
        .await
        .unwrap();
        let raw = Raw::default();
        let client = raw.on(on(&mock, style)).build().unwrap();
        let ran = run(&client, streamed, "go", &echo_toolkit())
            .await
            .unwrap_or_else(|e| panic!("{case}: {e}"));

        let result = &ran.result;
        assert_eq!(result.status, RunStatus::Done, "{case}");
        assert_eq!(result.text, "done", "{case}");
        assert!(!result.text.contains(THOUGHT) && !result.text.contains(AFTERTHOUGHT));
        let said: Vec<Option<String>> = result
            .messages
            .iter()
            .filter(|m| matches!(m, Message::Assistant { .. }))
            .map(Message::reasoning)
            .collect();
        assert_eq!(
            said,
            [Some(THOUGHT.to_owned()), Some(AFTERTHOUGHT.to_owned())],
            "{case}"
        );
        if streamed {
            assert_eq!(ran.reasoning, format!("{THOUGHT}{AFTERTHOUGHT}"), "{case}");
            assert_eq!(ran.text, "done", "{case}");
        }
        for m in &result.messages {
            if let Message::Assistant { content, .. } = m {
                assert!(!content.contains(THOUGHT), "{case}: reasoning is not text");
            }
        }

        let seen = mock.requests();
        assert_eq!(seen.len(), 2, "{case}");
        assert_state_came_back(style, &raw.get(0), &seen[1], "call_1");
    }
}

#[tokio::test]
async fn a_halted_reasoning_turn_resumes_from_json_in_a_fresh_client() {
    for (style, streamed) in CASES {
        let case = format!("{style:?}, streamed: {streamed}");
        let approver = Approver::default();
        let mock = MockLlm::start([
            Reply::tool_call("call_1", "approve_purchase", json!({"item": "gpu"}))
                .with_reasoning(THOUGHT),
            Reply::text("bought"),
        ])
        .await
        .unwrap();
        let raw = Raw::default();
        let saved = {
            let client = raw.on(on(&mock, style)).build().unwrap();
            let tk = Toolkit::builder().tool(approver.tool()).build().unwrap();
            let halted = run(&client, streamed, "buy a gpu", &tk)
                .await
                .unwrap()
                .result;
            assert_eq!(halted.status, RunStatus::Pending, "{case}");
            (
                serde_json::to_string(&halted.messages).unwrap(),
                serde_json::to_string(&halted.pending).unwrap(),
            )
        };

        // Another process: only the text survives.
        let messages: Vec<Message> = serde_json::from_str(&saved.0).unwrap();
        let request: Option<Request> = serde_json::from_str(&saved.1).unwrap();
        let request = request.unwrap();
        assert_eq!(messages[1].reasoning().as_deref(), Some(THOUGHT), "{case}");
        let client = on(&mock, style).build().unwrap();
        let tk = Toolkit::builder().tool(approver.tool()).build().unwrap();
        let ran = resume(&client, streamed, messages, &request, &tk)
            .await
            .unwrap_or_else(|e| panic!("{case}: {e}"));
        assert_eq!(ran.result.status, RunStatus::Done, "{case}");
        assert_eq!(ran.result.text, "bought", "{case}");
        assert_state_came_back(style, &raw.get(0), &mock.requests()[1], "call_1");
    }
}

#[tokio::test]
async fn a_transcript_continued_on_the_other_style_leaves_the_foreign_state_out() {
    for (first, then) in [
        (Style::Anthropic, Style::OpenAi),
        (Style::OpenAi, Style::Anthropic),
    ] {
        let case = format!("{first:?} then {then:?}");
        let mock = MockLlm::start([echo_turn(), Reply::text("done"), Reply::text("again")])
            .await
            .unwrap();
        let tk = echo_toolkit();
        let before = on(&mock, first)
            .build()
            .unwrap()
            .run("go", &tk)
            .await
            .unwrap();
        assert!(
            before.messages.iter().any(|m| matches!(
                m,
                Message::Assistant { state: Some(s), .. } if s.style() == first
            )),
            "{case}"
        );

        let after = on(&mock, then)
            .build()
            .unwrap()
            .run("and again", &tk)
            .history(before.messages)
            .await
            .unwrap_or_else(|e| panic!("{case}: {e}"));
        assert_eq!(after.text, "again", "{case}");

        let sent = mock.requests()[2].body.to_string();
        assert!(
            sent.contains("call_1"),
            "{case}: the neutral call goes: {sent}"
        );
        for foreign in [
            THOUGHT,
            "thinking",
            "signature",
            "reasoning_content",
            "extra_content",
        ] {
            assert!(
                !sent.contains(foreign),
                "{case}: {foreign} was sent: {sent}"
            );
        }
        // The transcript keeps the state for its own style.
        assert_eq!(
            after.messages[1].reasoning().as_deref(),
            Some(THOUGHT),
            "{case}"
        );
    }
}
