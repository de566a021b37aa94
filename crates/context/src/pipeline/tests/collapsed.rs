//! Step 4, collapse: older turns go out as a log, the decision sticks and is restored.

use cairn_protocol::ImageSource;
use pretty_assertions::assert_eq;

use super::super::accounting::messages_tokens;
use super::super::collapse::{LOG_FOOTER, LOG_HEADER, TODO_HEADING};
use super::*;

/// One turn whose result no lighter step can clear (a sub-agent's answer cannot be fetched
/// again): the prompt, a `Task` call returning `chars` characters, the answer.
fn task_turn(conversation: &mut Vec<Message>, turn: usize, chars: usize) {
    let id = format!("task-{turn}");
    conversation.push(Message::user_text(format!("prompt {turn}")));
    conversation.push(call(
        &id,
        "Task",
        json!({"description": format!("look {turn}"), "prompt": "Look closely."}),
    ));
    conversation.push(result(&id, &"t".repeat(chars)));
    conversation.push(answer(&format!("answer {turn}")));
}

/// Ten turns of 1,500-token results and a prompt: 15,184 tokens, over the 15,030 collapse
/// threshold of the small window and under its 16,700 autocompact threshold.
fn ten_turns() -> Vec<Message> {
    let mut conversation = Vec::new();
    for turn in 1..11 {
        task_turn(&mut conversation, turn, 6_000);
    }
    conversation.push(Message::user_text("go on"));
    conversation
}

/// The log's entry for one of [`task_turn`]'s turns.
fn task_entry(turn: usize) -> String {
    let opening = if turn == 1 {
        "After the first message:\n".to_string()
    } else {
        format!("The user wrote:\nprompt {turn}\n")
    };
    format!("{opening}- tools: Task look {turn}\n- answer: answer {turn}\n\n")
}

fn log_of_task_turns(turns: std::ops::Range<usize>) -> String {
    let entries: String = turns.map(task_entry).collect();
    format!("{LOG_HEADER}{entries}{LOG_FOOTER}")
}

fn collapsed_through(projection: &Projection) -> Vec<Option<u64>> {
    projection
        .compactions
        .iter()
        .map(|compaction| compaction.collapsed_through)
        .collect()
}

#[test]
fn a_long_sessions_older_turns_go_out_as_a_log_and_the_stored_conversation_is_kept() {
    let pipeline = warm_pipeline();
    let mut conversation = ten_turns();
    let stored = conversation.clone();
    let summarizer = FakeSummarizer::default();
    let projection =
        block_on(pipeline.project(&mut conversation, accounting(), Trigger::Auto, &summarizer))
            .unwrap();

    assert_eq!(
        conversation, stored,
        "collapse never rewrites the conversation"
    );
    assert_eq!(summarizer.times_asked(), 0, "no model call");
    // Turns 1 to 4 collapse: the fewest that bring the request to 60% of the autocompact
    // threshold (10,020 tokens); turn 5 opens the rest, whole.
    let mut expected = vec![Message {
        role: Role::User,
        content: vec![
            ContentBlock::text("prompt 1"),
            ContentBlock::text(log_of_task_turns(1..5)),
            ContentBlock::text("prompt 5"),
        ],
    }];
    expected.extend_from_slice(&stored[17..]);
    assert_eq!(projection.messages, expected);
    assert_valid_for_the_api(&projection.messages);
    assert_eq!(
        projection.compactions,
        vec![Compaction {
            step: "collapse".into(),
            manual: false,
            tokens_before: messages_tokens(&stored),
            tokens_after: messages_tokens(&expected),
            summary: None,
            opening: Vec::new(),
            collapsed_through: Some(16),
        }]
    );
    assert_eq!(messages_tokens(&stored), 15_184);
    assert!(
        messages_tokens(&expected) <= collapse::target(small_window().limits(None)),
        "{}",
        messages_tokens(&expected)
    );
}

#[test]
fn the_same_conversation_gives_the_same_view_and_later_requests_keep_it() {
    let summarizer = FakeSummarizer::default();
    let first = warm_pipeline();
    let second = warm_pipeline();
    let mut conversation = ten_turns();
    let one = block_on(first.project(&mut conversation, accounting(), Trigger::Auto, &summarizer))
        .unwrap();
    let two = block_on(second.project(&mut conversation, accounting(), Trigger::Auto, &summarizer))
        .unwrap();
    assert_eq!(one, two);

    // Sticky: the next requests send the same collapsed opening, with what came since.
    conversation.push(answer("going on"));
    conversation.push(Message::user_text("and the tests?"));
    let next = block_on(first.project(&mut conversation, accounting(), Trigger::Auto, &summarizer))
        .unwrap();
    assert_eq!(next.compactions, Vec::new());
    let mut expected = one.messages.clone();
    expected.extend_from_slice(&conversation[conversation.len() - 2..]);
    assert_eq!(next.messages, expected);
}

#[test]
fn a_restored_mark_shows_the_same_view_and_one_that_does_not_fit_is_ignored() {
    let summarizer = FakeSummarizer::default();
    let mut conversation = ten_turns();
    let original = block_on(warm_pipeline().project(
        &mut conversation,
        accounting(),
        Trigger::Auto,
        &summarizer,
    ))
    .unwrap();
    assert_eq!(collapsed_through(&original), vec![Some(16)]);

    // A resumed session: a new pipeline told the recorded mark, its cache cold.
    let resumed = pipeline(small_window(), FakeClock::new()).with_collapsed_through(16);
    let again =
        block_on(resumed.project(&mut conversation, accounting(), Trigger::Auto, &summarizer))
            .unwrap();
    assert_eq!(again.messages, original.messages);
    assert_eq!(again.compactions, Vec::new(), "nothing new was decided");

    // A mark inside a turn (message 17 is a call) is not a place to collapse to: the
    // pipeline decides afresh, and comes to the same place.
    let misplaced = pipeline(small_window(), FakeClock::new()).with_collapsed_through(17);
    let fresh =
        block_on(misplaced.project(&mut conversation, accounting(), Trigger::Auto, &summarizer))
            .unwrap();
    assert_eq!(fresh, original);

    // A mark beyond a short conversation is ignored too.
    let mut short = vec![Message::user_text("hello"), answer("hi")];
    let beyond = pipeline(small_window(), FakeClock::new()).with_collapsed_through(16);
    let view =
        block_on(beyond.project(&mut short, accounting(), Trigger::Auto, &summarizer)).unwrap();
    assert_eq!(view.messages, short);
}

#[test]
fn collapse_is_extended_in_a_large_step_when_the_threshold_comes_again() {
    let pipeline = warm_pipeline();
    let summarizer = FakeSummarizer::default();
    let mut conversation = ten_turns();
    let first =
        block_on(pipeline.project(&mut conversation, accounting(), Trigger::Auto, &summarizer))
            .unwrap();
    let first_log = opening_texts(&first.messages)[1].clone();

    // Four more turns bring the view back over the threshold.
    conversation.pop();
    let mut later = Vec::new();
    for turn in 11..15 {
        task_turn(&mut conversation, turn, 6_000);
        conversation.push(Message::user_text("go on"));
        later.push(
            block_on(pipeline.project(&mut conversation, accounting(), Trigger::Auto, &summarizer))
                .unwrap(),
        );
        conversation.pop();
    }
    let marks: Vec<Vec<Option<u64>>> = later.iter().map(collapsed_through).collect();
    // One request rides on the first collapse; at the second the reads carried for turns a
    // collapse could leave out have reached the cost of rewriting the opening, so it
    // collapses as far as it may (turns 5 to 10; turn 11 opens the rest, the three most
    // recent turns whole), before the threshold comes again; the next requests ride on it.
    assert_eq!(marks, vec![vec![], vec![Some(40)], vec![], vec![]]);
    assert_eq!(summarizer.times_asked(), 0);
    let last = later.last().unwrap();
    assert_valid_for_the_api(&last.messages);
    assert_eq!(
        opening_texts(&last.messages),
        vec![
            "prompt 1".to_string(),
            log_of_task_turns(1..11),
            "prompt 11".to_string()
        ]
    );
    // The earlier log's entries open the longer one: the old decision is kept, not redone.
    assert!(
        log_of_task_turns(1..11).starts_with(first_log.strip_suffix(LOG_FOOTER).unwrap()),
        "{first_log}"
    );
    assert!(
        messages_tokens(&last.messages) <= collapse::target(small_window().limits(None)),
        "{}",
        messages_tokens(&last.messages)
    );
}

#[test]
fn the_log_keeps_the_users_words_failures_denials_changed_files_and_the_todo_list() {
    let mut conversation = vec![
        Message {
            role: Role::User,
            content: vec![
                ContentBlock::text("Fix the parser so it accepts trailing commas."),
                ContentBlock::text("<system-reminder>Branch: main</system-reminder>"),
            ],
        },
        Message {
            role: Role::Assistant,
            content: vec![
                ContentBlock::text("I'll look."),
                ContentBlock::ToolUse {
                    id: "todo".into(),
                    name: "TodoWrite".into(),
                    input: json!({"todos": [
                        {"content": "Read the parser", "status": "completed", "activeForm": "Reading"},
                        {"content": "Accept trailing commas", "status": "pending", "activeForm": "Fixing"}
                    ]}),
                },
            ],
        },
        result("todo", "Todos have been modified successfully."),
        call("read", "Read", json!({"file_path": "/src/parser.rs"})),
        result("read", "fn parse() {}"),
        call(
            "edit",
            "Edit",
            json!({"file_path": "/src/parser.rs", "old_string": "{}", "new_string": "{ commas() }"}),
        ),
        result("edit", "The file /src/parser.rs has been updated."),
        call("test", "Bash", json!({"command": "cargo test\n  --all"})),
        Message {
            role: Role::User,
            content: vec![ContentBlock::tool_result(
                "test",
                "error: 1 test failed\ntest parse_empty ... FAILED",
                true,
            )],
        },
        answer("The parser accepts trailing commas now; one test still fails."),
        Message {
            role: Role::User,
            content: vec![
                ContentBlock::text("Also handle empty input."),
                ContentBlock::Image {
                    source: ImageSource::Url {
                        url: "https://example.com/screenshot.png".into(),
                    },
                },
            ],
        },
        call(
            "hosts",
            "Write",
            json!({"file_path": "/etc/hosts", "content": ""}),
        ),
        Message {
            role: Role::User,
            content: vec![ContentBlock::tool_result(
                "hosts",
                "The user denied this tool call.",
                true,
            )],
        },
        answer("I will not touch /etc/hosts."),
        Message::user_text("Thanks. Now the lexer."),
        answer("On it."),
    ];
    let view = collapse::project(&conversation, 14, &ViewDecisions::default());
    let log = format!(
        "{LOG_HEADER}\
         After the first message:\n\
         - tools: TodoWrite; Read /src/parser.rs; Edit /src/parser.rs; Bash `cargo test --all` \
         (failed: error: 1 test failed)\n\
         - files changed: /src/parser.rs\n\
         - answer: The parser accepts trailing commas now; one test still fails.\n\n\
         The user wrote:\n\
         Also handle empty input.\n\
         [image]\n\
         - tools: Write /etc/hosts (failed: The user denied this tool call.)\n\
         - answer: I will not touch /etc/hosts.\n\n\
         {TODO_HEADING}\
         - [completed] Read the parser\n\
         - [pending] Accept trailing commas\n\n\
         {LOG_FOOTER}"
    );
    assert_eq!(
        view,
        vec![
            Message {
                role: Role::User,
                content: vec![
                    ContentBlock::text("Fix the parser so it accepts trailing commas."),
                    ContentBlock::text("<system-reminder>Branch: main</system-reminder>"),
                    ContentBlock::text(log),
                    ContentBlock::text("Thanks. Now the lexer."),
                ],
            },
            answer("On it."),
        ]
    );
    assert_valid_for_the_api(&view);

    // Only at a prompt that follows the model's message: never inside a turn.
    conversation.truncate(15);
    for through in [0, 1, 3, 4, 12, 13, 15] {
        assert!(
            !collapse::is_boundary(&conversation, through),
            "{through} is no boundary"
        );
        assert_eq!(
            collapse::project(&conversation, through, &ViewDecisions::default()),
            conversation
        );
    }
    assert!(collapse::is_boundary(&conversation, 10));
    assert!(collapse::is_boundary(&conversation, 14));
}

#[test]
fn the_three_most_recent_turns_are_never_collapsed_and_autocompact_follows() {
    // Two huge turns and the prompt after three small turns: the three most recent stay, and
    // collapsing the small ones cannot bring the request under the threshold, so nothing is
    // collapsed and the summary is asked for.
    let pipeline = warm_pipeline();
    let summarizer = FakeSummarizer::default();
    let mut conversation = Vec::new();
    for turn in 1..4 {
        task_turn(&mut conversation, turn, 400);
    }
    for turn in 4..6 {
        task_turn(&mut conversation, turn, 33_000);
    }
    conversation.push(Message::user_text("go on"));
    let projection =
        block_on(pipeline.project(&mut conversation, accounting(), Trigger::Auto, &summarizer))
            .unwrap();
    assert_eq!(
        projection
            .compactions
            .iter()
            .map(|compaction| compaction.step.as_str())
            .collect::<Vec<_>>(),
        vec!["autocompact"]
    );
    assert_eq!(summarizer.times_asked(), 1);
    // The summary request was sent the view as it was: uncollapsed.
    let asked = summarizer.asked.lock().unwrap();
    assert_eq!(asked[0].0.len(), 21);
    assert_eq!(asked[0].0[0], Message::user_text("prompt 1"));
}
