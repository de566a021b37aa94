//! Tests of [`super::Transcript`]: retries, unstreamed messages, interrupted turns, answers
//! finished as they stream.

use cairn_protocol::{ContentBlock, Message, Role, TurnSummary, Usage};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::render::LIVE_TAIL_BYTES;
use super::*;

fn texts(lines: &[Line<'_>]) -> Vec<String> {
    lines.iter().map(|line| line.to_string()).collect()
}

fn finished(end: TurnEnd) -> AgentEvent {
    AgentEvent::TurnFinished(TurnSummary {
        op_id: String::new(),
        end,
        result: String::new(),
        requests: 1,
        usage: Usage::default(),
        cost_usd: 0.0,
        cost_unknown: false,
        duration_api_ms: 0,
    })
}

fn message_done(message: Message) -> AgentEvent {
    AgentEvent::AssistantMessage {
        message,
        id: "msg".into(),
        model: "m".into(),
        stop_reason: None,
        usage: Usage::default(),
        cost_usd: 0.0,
    }
}

#[test]
fn a_retry_that_discards_the_partial_answer_drops_it() {
    let mut transcript = Transcript::new();
    let theme = Theme::plain();
    transcript.apply(&AgentEvent::ThinkingDelta { text: "hmm".into() });
    transcript.apply(&AgentEvent::TextDelta {
        text: "Half an ans".into(),
    });
    transcript.apply(&AgentEvent::Retrying(RetryNotice {
        attempt: 2,
        max_attempts: 5,
        delay_ms: 1500,
        reason: "overloaded".into(),
        discard_partial: true,
    }));
    assert_eq!(
        texts(&transcript.render_live(60, &theme)),
        vec!["⟳ overloaded — retrying in 1.5s (attempt 2 of 5)"]
    );
    transcript.apply(&AgentEvent::TextDelta {
        text: "A whole answer".into(),
    });
    transcript.apply(&message_done(Message::user_text("")));
    assert_eq!(
        texts(&transcript.render_finished(60, &theme)),
        vec!["● A whole answer", ""]
    );
}

#[test]
fn a_message_that_was_not_streamed_is_shown_whole() {
    let mut transcript = Transcript::new();
    transcript.apply(&message_done(Message {
        role: Role::Assistant,
        content: vec![
            ContentBlock::text("Listing."),
            ContentBlock::ToolUse {
                id: "t1".into(),
                name: "LS".into(),
                input: json!({"path": "/repo"}),
            },
        ],
    }));
    let theme = Theme::plain();
    assert_eq!(
        texts(&transcript.render_finished(60, &theme)),
        vec!["● Listing.", ""]
    );
    assert_eq!(
        texts(&transcript.render_live(60, &theme)),
        vec!["● LS(/repo)", "  ⎿ Running…"]
    );
}

#[test]
fn the_tail_of_the_finished_lines_is_the_end_of_all_of_them() {
    let mut transcript = Transcript::new();
    let theme = Theme::plain();
    for n in 0..6 {
        transcript.apply(&AgentEvent::UserMessage {
            message: Message::user_text(format!("question {n}")),
        });
        transcript.apply(&message_done(Message {
            role: Role::Assistant,
            content: vec![ContentBlock::text(format!(
                "answer {n}, long enough to wrap at a narrow width"
            ))],
        }));
        transcript.apply(&finished(TurnEnd::Completed));
    }
    transcript.apply(&AgentEvent::TextDelta {
        text: "A new answer.\n\nStill being".into(),
    });
    let all = texts(&transcript.render_finished(24, &theme));
    for rows in [0, 1, 5, 13, all.len(), all.len() + 10] {
        let tail = texts(&transcript.render_finished_tail(24, &theme, rows));
        assert_eq!(tail, all[all.len().saturating_sub(rows)..], "{rows} rows");
    }
}

#[test]
fn a_call_waiting_for_the_user_says_so_until_the_answer() {
    let mut transcript = Transcript::new();
    let theme = Theme::plain();
    transcript.apply(&AgentEvent::ToolCallInputComplete {
        id: "t1".into(),
        name: "Bash".into(),
        input: json!({"command": "npm install"}),
    });
    transcript.apply(&AgentEvent::PermissionRequested {
        request_id: "perm_1".into(),
        tool_use_id: "t1".into(),
        tool: "Bash".into(),
        input: json!({"command": "npm install"}),
        reason: "npm install reaches the network".into(),
        suggested_rule: None,
    });
    assert_eq!(
        texts(&transcript.render_live(60, &theme)),
        vec!["● Bash(npm install)", "  ⎿ Waiting for approval…"]
    );
    transcript.apply(&AgentEvent::PermissionDecided(
        cairn_protocol::PermissionDecision {
            input: serde_json::Value::Null,
            tool_use_id: "t1".into(),
            tool: "Bash".into(),
            allowed: true,
            source: cairn_protocol::DecisionSource::User,
            rule: None,
            reason: None,
        },
    ));
    assert_eq!(
        texts(&transcript.render_live(60, &theme)),
        vec!["● Bash(npm install)", "  ⎿ Running…"]
    );
}

#[test]
fn an_interrupted_turn_finishes_its_running_tools() {
    let mut transcript = Transcript::new();
    transcript.apply(&AgentEvent::ToolCallInputComplete {
        id: "t1".into(),
        name: "Bash".into(),
        input: json!({"command": "sleep 100"}),
    });
    transcript.apply(&finished(TurnEnd::Interrupted));
    assert!(!transcript.is_busy());
    assert_eq!(
        texts(&transcript.take_unflushed(60, &Theme::plain())),
        vec![
            "● Bash(sleep 100)",
            "  ⎿ Interrupted",
            "",
            "⚠ Interrupted by user",
            ""
        ]
    );
    assert!(transcript.take_unflushed(60, &Theme::plain()).is_empty());
}

#[test]
fn images_in_a_prompt_are_named() {
    let mut transcript = Transcript::new();
    transcript.apply(&AgentEvent::UserMessage {
        message: Message {
            role: Role::User,
            content: vec![
                ContentBlock::text("What is this?"),
                ContentBlock::Image {
                    source: cairn_protocol::ImageSource::Url {
                        url: "https://x.dev/a.png".into(),
                    },
                },
            ],
        },
    });
    assert_eq!(
        texts(&transcript.render_finished(60, &Theme::plain())),
        vec!["> What is this?", "  [image]", ""]
    );
}

#[test]
fn a_long_prompt_shows_its_beginning_and_the_full_view_all_of_it() {
    let pasted: Vec<String> = (1..=5000).map(|n| format!("pasted line {n}")).collect();
    let mut transcript = Transcript::new();
    transcript.apply(&AgentEvent::UserMessage {
        message: Message::user_text(pasted.join("\n")),
    });
    let shown = texts(&transcript.render_finished(60, &Theme::plain()));
    assert_eq!(shown.len(), 22, "{shown:?}");
    assert_eq!(shown[0], "> pasted line 1");
    assert_eq!(shown[20], "  … +4980 lines (ctrl+o shows them)");
    let full = texts(&transcript.render_full(60, &Theme::plain()));
    assert!(full.iter().any(|line| line.contains("pasted line 5000")));
}

/// A prompt as the UI sends it: an earlier `!command`'s output, what the user typed, the file
/// it mentions, SessionStart context, and the context a UserPromptSubmit hook added.
fn prompt_with_context() -> Message {
    let lock: String = (1..=3780)
        .map(|n| format!("line {n} of the lock\n"))
        .collect();
    Message {
        role: Role::User,
        content: vec![
            ContentBlock::text(
                "<bash-input>git status --short</bash-input>\n\
                 <bash-stdout> M Cargo.lock\n M src/main.rs</bash-stdout>\n<bash-stderr></bash-stderr>",
            ),
            ContentBlock::text("why did @Cargo.lock change?"),
            ContentBlock::text(format!("Contents of Cargo.lock:\n```\n{lock}```")),
            ContentBlock::text(
                "<system-reminder>\nBranch: main, 2 commits ahead\n</system-reminder>",
            ),
            ContentBlock::text("<system-reminder>\nToday is Tuesday.\n</system-reminder>"),
        ],
    }
}

#[test]
fn a_prompt_shows_what_was_typed_and_a_line_per_attachment() {
    let theme = Theme::plain();
    let mut transcript = Transcript::new();
    transcript.apply(&AgentEvent::UserMessage {
        message: prompt_with_context(),
    });
    let expected = vec![
        "> why did @Cargo.lock change?",
        "  ⎿ Attached Cargo.lock (3,780 lines)",
        "",
    ];
    assert_eq!(texts(&transcript.render_finished(60, &theme)), expected);
    assert_eq!(texts(&transcript.render_full(60, &theme)), expected);
    assert_eq!(texts(&transcript.take_unflushed(60, &theme)), expected);
}

#[test]
fn a_cut_attachment_and_an_image_show_as_one_line_each() {
    let mut transcript = Transcript::new();
    transcript.apply(&AgentEvent::UserMessage {
        message: Message {
            role: Role::User,
            content: vec![
                ContentBlock::text("compare @logs/big.log with this"),
                ContentBlock::Image {
                    source: cairn_protocol::ImageSource::Url {
                        url: "https://x.dev/a.png".into(),
                    },
                },
                ContentBlock::text(format!(
                    "Contents of logs/big.log:\n```\n{}\n```\n\
                     (Only the first 100 KB of 2345678 bytes are shown.)",
                    "x".repeat(500)
                )),
            ],
        },
    });
    assert_eq!(
        texts(&transcript.render_finished(40, &Theme::plain())),
        vec![
            "> compare @logs/big.log with this",
            "  [image]",
            "  ⎿ Attached logs/big.log (first 100 KB",
            "    of 2,345,678 bytes)",
            "",
        ]
    );
}

#[test]
fn typed_text_shaped_like_an_attachment_is_still_shown() {
    let mut transcript = Transcript::new();
    transcript.apply(&AgentEvent::UserMessage {
        message: Message::user_text("Contents of notes.md:\n```\nkeep this\n```"),
    });
    assert_eq!(
        texts(&transcript.render_finished(60, &Theme::plain())),
        vec![
            "> Contents of notes.md:",
            "  ```",
            "  keep this",
            "  ```",
            ""
        ]
    );
}

#[test]
fn a_prompt_of_only_shell_output_and_reminders_shows_nothing() {
    let mut transcript = Transcript::new();
    transcript.apply(&AgentEvent::UserMessage {
        message: Message {
            role: Role::User,
            content: vec![
                ContentBlock::text(
                    "<bash-input>ls</bash-input>\n<bash-stdout>a</bash-stdout>\n<bash-stderr></bash-stderr>",
                ),
                ContentBlock::text("<system-reminder>\nhook context\n</system-reminder>"),
            ],
        },
    });
    assert!(transcript.render_finished(60, &Theme::plain()).is_empty());
}

#[test]
fn a_long_streaming_message_shows_the_same_last_lines_as_the_whole() {
    let theme = Theme::plain();
    let paragraph = "words of a long answer that wraps over several lines ".repeat(20);
    let mut text = String::new();
    while text.len() < 3 * LIVE_TAIL_BYTES {
        text.push_str(&paragraph);
        text.push_str("\n\n");
    }
    // A code block the tail's cut falls inside, still open at the end.
    text.push_str("```rust\n");
    for n in 0..4000 {
        text.push_str(&format!("let x{n} = {n};\n\n"));
    }
    let whole = texts(&Transcript::new().render_cell(&Cell::Assistant(text.clone()), 60, &theme));
    let mut transcript = Transcript::new();
    transcript.apply(&AgentEvent::TextDelta { text });
    let live = texts(&transcript.render_live(60, &theme));
    assert!(live.len() > 100, "the tail covers many viewports");
    assert_eq!(live[live.len() - 100..], whole[whole.len() - 100..]);
    // The paragraphs are finished; of the code block, the last block, only the end is live.
    let finished = texts(&transcript.render_finished(60, &theme));
    assert!(finished.len() > 100);
    assert_eq!(finished[..], whole[..finished.len()]);
    assert!(live.len() < (whole.len() - finished.len()) / 2);
}

/// One section of a long answer: every kind of block, several with empty lines inside that a
/// cut must not split, and some whose rendering would change if it did.
const SECTION: &str = concat!(
    "## Section\n\n",
    "A paragraph of prose that wraps over several lines at the narrower widths, with `code`, ",
    "*emphasis* and a [link](https://example.com).\nIts second line.\n\n",
    "```rust\nfn main() {\n\n    let x = 1;\n\n\n    println!(\"{x}\");\n}\n```\n\n",
    "- a loose list\n\n- whose items\n\n  have paragraphs\n- and one more\n\n",
    "1. numbered\n\n2. across empty lines\n\n3. three\n\n",
    "| name | value |\n|------|------:|\n| one | 1 |\n| two | 22 |\n\n",
    "> a quote\n>\n> over empty lines\n\n>\n\n",
    "Setext heading\n---\n\n",
    "<!-- a comment\n\nwith empty lines -->\n\n",
    "    indented code\n\n    after an empty line\n\n",
    "```\n```\n\n",
    "- an item with a fence\n  ```\n  inside\n\nafter the list\n\n",
    "```\na fence of its own\n\nstill code\n```\n\n",
    "***\n\n",
);

/// Takes everything `transcript` has unflushed, `budget` bytes of text a call; returns the
/// lines and how many calls it took.
fn flush_in_pieces(
    transcript: &mut Transcript,
    budget: usize,
    width: u16,
    theme: &Theme,
) -> (Vec<Line<'static>>, usize) {
    let mut lines = Vec::new();
    let mut calls = 0;
    while transcript.has_unflushed() {
        lines.extend(transcript.take_unflushed_within(budget, width, theme));
        calls += 1;
    }
    assert!(transcript.take_unflushed(width, theme).is_empty());
    (lines, calls)
}

fn answered(text: &str) -> Transcript {
    let mut transcript = Transcript::new();
    transcript.apply(&AgentEvent::TextDelta { text: text.into() });
    transcript.apply(&message_done(Message::user_text("")));
    transcript.apply(&finished(TurnEnd::MaxTokens));
    transcript
}

#[test]
fn a_long_message_flushed_in_pieces_renders_as_the_whole() {
    let theme = Theme::dark();
    let text = SECTION.repeat(5 * FLUSH_BYTES / SECTION.len());
    for width in [30, 100] {
        let whole = answered(&text).render_finished(width, &theme);
        let (lines, calls) = flush_in_pieces(&mut answered(&text), FLUSH_BYTES, width, &theme);
        assert!(calls >= 4, "{calls} calls at width {width}");
        assert_eq!(lines, whole, "width {width}");
        for budget in [1, 64, 1000] {
            let (lines, _) = flush_in_pieces(&mut answered(&text[..8000]), budget, width, &theme);
            let whole = answered(&text[..8000]).render_finished(width, &theme);
            assert_eq!(lines, whole, "width {width}, budget {budget}");
        }
    }
}

#[test]
fn the_public_take_unflushed_hands_out_a_long_message_in_pieces() {
    let theme = Theme::plain();
    let text = SECTION.repeat(5 * FLUSH_BYTES / SECTION.len());
    let mut transcript = answered(&text);
    let first = transcript.take_unflushed(80, &theme);
    assert!(transcript.has_unflushed());
    assert_eq!(texts(&first[..2]), ["● Section", "  "]);
    let mut lines = first;
    while transcript.has_unflushed() {
        lines.extend(transcript.take_unflushed(80, &theme));
    }
    let all = texts(&lines);
    assert_eq!(
        all[all.len() - 3..],
        [
            "",
            "⚠ The answer was cut off: the model reached its output token limit.",
            ""
        ]
    );
    assert_eq!(lines, transcript.render_finished(80, &theme));
}

#[test]
fn text_that_may_define_link_references_or_holds_escapes_is_cut_only_where_safe() {
    let theme = Theme::dark();
    let filler = SECTION.repeat(4);
    // A reference used before its definition, and one whose label spans two lines.
    let references = format!(
        "See [the docs] and [two\nlines].\n\n{filler}[the docs]: https://x.dev\n\n[two\nlines]: \
         https://y.dev\n"
    );
    // An escape sequence left open across empty lines swallows them when sanitized.
    let escapes = format!("{filler}Colour \u{1b}]8;;\n\nstill in it\u{7} after.\n\n{filler}");
    for text in [references, escapes] {
        for budget in [1, 200] {
            let (lines, _) = flush_in_pieces(&mut answered(&text), budget, 60, &theme);
            assert_eq!(lines, answered(&text).render_finished(60, &theme));
        }
    }
    let whole = texts(
        &answered("See [the docs].\n\n[the docs]: https://x.dev").render_finished(60, &theme),
    );
    assert_eq!(whole[0], "● See the docs (https://x.dev).");
}

/// Sizes of deltas and flush budgets: random, and the same on every run.
struct Sizes(u64);

impl Sizes {
    /// The next size, from 1 to `max`.
    fn next(&mut self, max: usize) -> usize {
        // xorshift64
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        usize::try_from(self.0 % max as u64).unwrap_or(0) + 1
    }
}

/// Streams `text` in deltas of random sizes, taking what is finished after each delta with a
/// random budget, then ends the message and the turn (on the token limit, as [`answered`]
/// does) and takes the rest. Returns every line taken and how many came before the message
/// ended. With `check_screen`, checks after each delta that the lines taken and the live
/// region show the text so far as it renders whole.
fn stream_and_flush(
    text: &str,
    width: u16,
    theme: &Theme,
    sizes: &mut Sizes,
    check_screen: bool,
) -> (Vec<Line<'static>>, usize) {
    let mut transcript = Transcript::new();
    let mut lines = Vec::new();
    let mut at = 0;
    while at < text.len() {
        let mut end = (at + sizes.next(48)).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        transcript.apply(&AgentEvent::TextDelta {
            text: text[at..end].into(),
        });
        at = end;
        while transcript.has_unflushed() {
            let budget = sizes.next(2 * FLUSH_BYTES);
            lines.extend(transcript.take_unflushed_within(budget, width, theme));
        }
        if check_screen {
            let mut screen = lines.clone();
            screen.extend(transcript.render_live(width, theme));
            assert_eq!(screen, render_answer(&text[..at], width, theme), "at {at}");
            assert_eq!(
                transcript.render_finished(width, theme),
                lines,
                "finished at {at}"
            );
        }
    }
    let during = lines.len();
    transcript.apply(&message_done(Message::user_text("")));
    transcript.apply(&finished(TurnEnd::MaxTokens));
    let (rest, _) = flush_in_pieces(&mut transcript, FLUSH_BYTES, width, theme);
    lines.extend(rest);
    (lines, during)
}

#[test]
fn an_answer_flushed_as_it_streams_renders_as_the_whole() {
    let theme = Theme::dark();
    let mut sizes = Sizes(0x9e37_79b9_7f4a_7c15);
    let long = SECTION.repeat(3 * FLUSH_BYTES / SECTION.len());
    let short = SECTION.repeat(3);
    for width in [30, 100] {
        let whole = answered(&long).render_finished(width, &theme);
        let (lines, during) = stream_and_flush(&long, width, &theme, &mut sizes, false);
        assert_eq!(lines, whole, "width {width}");
        assert!(
            during > whole.len() * 9 / 10,
            "only {during} of {} lines came while it streamed",
            whole.len()
        );
        let (lines, _) = stream_and_flush(&short, width, &theme, &mut sizes, true);
        assert_eq!(
            lines,
            answered(&short).render_finished(width, &theme),
            "width {width}"
        );
    }
}

#[test]
fn a_streamed_answer_follows_what_came_before_it_in_order() {
    let theme = Theme::plain();
    let mut transcript = Transcript::new();
    // A tool call of an earlier message still waits for its result.
    transcript.apply(&AgentEvent::ToolCallInputComplete {
        id: "t1".into(),
        name: "Bash".into(),
        input: json!({"command": "make"}),
    });
    transcript.apply(&message_done(Message::user_text("")));
    transcript.apply(&AgentEvent::ThinkingDelta {
        text: "Let me see.".into(),
    });
    transcript.apply(&AgentEvent::TextDelta {
        text: "First.\n\nSecond.\n\nThi".into(),
    });
    assert!(!transcript.has_unflushed());
    assert_eq!(
        texts(&transcript.render_live(40, &theme)),
        [
            "● Bash(make)",
            "  ⎿ Running…",
            "",
            "✻ Let me see.",
            "",
            "● First.",
            "  ",
            "  Second.",
            "  ",
            "  Thi"
        ]
    );
    transcript.apply(&AgentEvent::ToolCallResult {
        id: "t1".into(),
        name: "Bash".into(),
        content: cairn_protocol::ToolResultContent::Text("built".into()),
        is_error: false,
    });
    // The call, the thinking, then the blocks known complete: a later one has a whole line.
    assert_eq!(
        texts(&transcript.take_unflushed(40, &theme)),
        [
            "● Bash(make)",
            "  ⎿ built",
            "",
            "✻ Let me see.",
            "",
            "● First."
        ]
    );
    assert!(!transcript.has_unflushed());
    assert_eq!(
        texts(&transcript.render_live(40, &theme)),
        ["  ", "  Second.", "  ", "  Thi"]
    );
    transcript.apply(&AgentEvent::TextDelta {
        text: "rd.\n\n- a list\n".into(),
    });
    assert_eq!(
        texts(&transcript.take_unflushed(40, &theme)),
        ["  ", "  Second.", "  ", "  Third."]
    );
    assert_eq!(
        texts(&transcript.render_live(40, &theme)),
        ["  ", "  • a list"]
    );
    transcript.apply(&message_done(Message::user_text("")));
    assert_eq!(
        texts(&transcript.take_unflushed(40, &theme)),
        ["  ", "  • a list", ""]
    );
    assert!(transcript.render_live(40, &theme).is_empty());
    assert!(!transcript.is_busy());
}

#[test]
fn a_retry_after_part_of_the_answer_went_out_says_it_was_cut_off() {
    let theme = Theme::plain();
    let retrying = AgentEvent::Retrying(RetryNotice {
        attempt: 2,
        max_attempts: 5,
        delay_ms: 1500,
        reason: "connection reset".into(),
        discard_partial: true,
    });
    let mut transcript = Transcript::new();
    transcript.apply(&AgentEvent::ThinkingDelta { text: "hmm".into() });
    transcript.apply(&AgentEvent::TextDelta {
        text: "First part.\n\nSecond part.\n\nThird".into(),
    });
    assert_eq!(
        texts(&transcript.take_unflushed(60, &theme)),
        ["✻ hmm", "", "● First part."]
    );
    transcript.apply(&retrying);
    assert_eq!(
        texts(&transcript.render_live(60, &theme)),
        ["⟳ connection reset — retrying in 1.5s (attempt 2 of 5)"]
    );
    transcript.apply(&AgentEvent::TextDelta {
        text: "A whole answer.".into(),
    });
    transcript.apply(&message_done(Message::user_text("")));
    let cut_off =
        "⚠ The answer above was cut off (connection reset) and is being retried from the start.";
    assert_eq!(
        texts(&transcript.take_unflushed(100, &theme)),
        ["", cut_off, "", "● A whole answer.", ""]
    );
    assert_eq!(
        texts(&transcript.render_finished(100, &theme)),
        [
            "✻ hmm",
            "",
            "● First part.",
            "",
            cut_off,
            "",
            "● A whole answer.",
            ""
        ]
    );

    // Finished but not yet handed out, the partial answer is dropped as if it had stayed live.
    let mut transcript = Transcript::new();
    transcript.apply(&AgentEvent::TextDelta {
        text: "First part.\n\nSecond part.\n\nThird".into(),
    });
    assert!(transcript.has_unflushed());
    transcript.apply(&retrying);
    transcript.apply(&AgentEvent::TextDelta {
        text: "A whole answer.".into(),
    });
    transcript.apply(&message_done(Message::user_text("")));
    assert_eq!(
        texts(&transcript.take_unflushed(100, &theme)),
        ["● A whole answer.", ""]
    );
}

#[test]
fn a_notice_during_a_partly_finished_answer_follows_it() {
    let theme = Theme::plain();
    let mut transcript = Transcript::new();
    transcript.apply(&AgentEvent::TextDelta {
        text: "Nothing finished yet".into(),
    });
    // As before: a notice goes before an answer none of which is finished.
    transcript.push_info("first note");
    transcript.apply(&AgentEvent::TextDelta {
        text: ".\n\nMore.\n\nLast".into(),
    });
    transcript.push_info("second note");
    assert_eq!(
        texts(&transcript.take_unflushed(40, &theme)),
        ["· first note", "", "● Nothing finished yet."]
    );
    assert_eq!(
        texts(&transcript.render_live(40, &theme)),
        ["  ", "  More.", "  ", "  Last", "", "· second note"]
    );
    transcript.apply(&message_done(Message::user_text("")));
    assert_eq!(
        texts(&transcript.take_unflushed(40, &theme)),
        ["  ", "  More.", "  ", "  Last", "", "· second note", ""]
    );
}

#[test]
fn an_agent_call_shows_its_sub_agents_progress_then_its_summary() {
    let mut transcript = Transcript::new();
    transcript.set_working_dir("/work");
    let theme = Theme::plain();
    transcript.apply(&AgentEvent::ToolCallInputComplete {
        id: "toolu_agent".into(),
        name: "Agent".into(),
        input: json!({"description": "find the loader", "prompt": "…", "subagent_type": "Explore"}),
    });
    assert_eq!(
        texts(&transcript.render_live(60, &theme)),
        vec!["● Agent(find the loader)", "  ⎿ Running…"]
    );
    let sub_agent = [
        AgentEvent::UserMessage {
            message: Message::user_text("…"),
        },
        AgentEvent::ToolCallInputComplete {
            id: "toolu_read".into(),
            name: "Read".into(),
            input: json!({"file_path": "/work/src/load.rs"}),
        },
        message_done(Message {
            role: Role::Assistant,
            content: vec![ContentBlock::text("…")],
        }),
    ];
    let facts = crate::ModelFacts::new(cairn_llm::registry::lookup);
    for event in &sub_agent {
        transcript.apply_sub_agent("toolu_agent", event, &facts);
    }
    // Another call's sub-agent is not this cell's.
    transcript.apply_sub_agent("toolu_other", &finished(TurnEnd::Completed), &facts);
    let live = texts(&transcript.render_live(60, &theme));
    assert_eq!(
        live[..2],
        ["● Agent(find the loader)", "  ⎿ Read(src/load.rs)"]
    );
    assert!(
        live[2].starts_with("    1 request · 1 tool use · 0 tokens · cost unknown · "),
        "{live:?}"
    );
    transcript.apply_sub_agent("toolu_agent", &finished(TurnEnd::Completed), &facts);
    transcript.apply(&AgentEvent::ToolCallResult {
        id: "toolu_agent".into(),
        name: "Agent".into(),
        content: cairn_protocol::ToolResultContent::Text("It is in src/load.rs.".into()),
        is_error: false,
    });
    transcript.apply(&finished(TurnEnd::Completed));
    let shown = texts(&transcript.render_finished(80, &theme));
    assert_eq!(shown[0], "● Agent(find the loader)");
    assert!(
        shown[1].starts_with("  ⎿ Done (1 request · 1 tool use · 0 tokens · cost unknown · "),
        "{shown:?}"
    );
    assert!(
        !shown.iter().any(|line| line.contains("It is in")),
        "{shown:?}"
    );
}
