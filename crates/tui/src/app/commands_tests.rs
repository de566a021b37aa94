//! What the input box does with a line, through the shared command table: the operation the
//! engine gets, or what the transcript shows.

use cairn_protocol::{ContentBlock, Op};
use pretty_assertions::assert_eq;
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

use super::super::{App, AppConfig, SettingsView};

#[derive(Debug)]
struct NoSettings;

impl SettingsView for NoSettings {
    fn read(&self) -> Result<(Vec<String>, String), String> {
        Ok((Vec::new(), String::new()))
    }
}

/// An app in its own project and home directories, and what it sends the engine.
struct Fixture {
    app: App,
    ops: UnboundedReceiver<Op>,
    project: tempfile::TempDir,
    _home: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let project = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let config = AppConfig {
            version: "0.0.0-test".into(),
            model: "claude-sonnet-4-5".into(),
            permission_mode: "default".into(),
            cwd: project.path().to_path_buf(),
            session_id: "session-1".into(),
            settings: std::sync::Arc::new(NoSettings),
            commands: Vec::new(),
            initial_prompt: None,
            resolve_model: |name| name.to_string(),
            model_facts: crate::ModelFacts::new(|_| cairn_llm::ModelInfo {
                context_window: None,
                max_output_tokens: None,
                price: None,
                capabilities: cairn_llm::Capabilities::DEFAULT,
            }),
            thinking: None,
            history_path: None,
            home: home.path().to_path_buf(),
            credential_variable: "ANTHROPIC_API_KEY".into(),
            system_prompt: None,
            tool_specs: Vec::new(),
            permission_gate: None,
            history: Vec::new(),
            resumable_sessions: |_| Vec::new(),
            status_command: None,
            memory_dir: None,
            startup_warnings: Vec::new(),
            startup_notes: Vec::new(),
            mcp: None,
            mcp_face: None,
            elicitations: None,
        };
        let (sender, ops) = unbounded_channel();
        Fixture {
            app: App::new(config, cairn_core::SessionInput::over_channel(sender)),
            ops,
            project,
            _home: home,
        }
    }

    fn project_command(&self, file: &str, text: &str) {
        let path = self.project.path().join(".claude/commands").join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// Submits `line`; returns what the engine got.
    fn submit(&mut self, line: &str) -> Vec<Op> {
        self.app.submit(line.to_string());
        // The ids the session input gives each piece of work are not what these tests check.
        std::iter::from_fn(|| self.ops.try_recv().ok())
            .map(|op| op.with_id(""))
            .collect()
    }

    fn transcript(&self) -> String {
        let theme = self.app.theme.clone();
        self.app
            .transcript
            .render_full(100, &theme)
            .iter()
            .map(|line| {
                line.spans
                    .iter()
                    .map(|span| span.content.as_ref())
                    .collect::<String>()
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

fn text_of(op: &Op) -> Vec<String> {
    match op {
        Op::UserMessage { content, .. } => content
            .iter()
            .map(|block| match block {
                ContentBlock::Text { text } => text.clone(),
                other => format!("{other:?}"),
            })
            .collect(),
        other => vec![format!("{other:?}")],
    }
}

#[test]
fn a_path_first_on_the_line_is_sent_as_a_message() {
    let mut fixture = Fixture::new();
    let ops = fixture.submit("/usr/bin/foo is broken");
    assert_eq!(ops.len(), 1, "{ops:?}");
    assert_eq!(text_of(&ops[0]), ["/usr/bin/foo is broken"]);
    assert!(!fixture.transcript().contains("Unknown command"));
}

#[test]
fn an_unknown_command_is_an_error_naming_it_and_nothing_is_sent() {
    let mut fixture = Fixture::new();
    assert_eq!(fixture.submit("/nope now"), Vec::<Op>::new());
    let transcript = fixture.transcript();
    assert!(
        transcript.contains("Unknown command: /nope. Type /help for the list of commands."),
        "{transcript}"
    );
}

#[test]
fn a_report_answers_in_the_transcript_without_a_turn() {
    let mut fixture = Fixture::new();
    assert_eq!(fixture.submit("/cost"), Vec::<Op>::new());
    assert_eq!(fixture.submit("/status"), Vec::<Op>::new());
    let transcript = fixture.transcript();
    assert!(transcript.contains("Total cost: $0.0000"), "{transcript}");
    assert!(
        transcript.contains("Auth: the ANTHROPIC_API_KEY environment variable"),
        "{transcript}"
    );
}

#[test]
fn compact_and_a_custom_command_become_the_engines_work() {
    let mut fixture = Fixture::new();
    assert_eq!(
        fixture.submit("/compact keep the API notes"),
        [Op::compact(Some("keep the API notes".into()))]
    );
    // Written after the app started: the table reads it at the next line.
    fixture.project_command("greet.md", "Say hello to $ARGUMENTS.");
    let ops = fixture.submit("/greet Ada");
    assert_eq!(ops.len(), 1, "{ops:?}");
    assert_eq!(
        text_of(&ops[0]),
        [
            "<command-name>/greet</command-name>\n<command-args>Ada</command-args>",
            "Say hello to Ada."
        ]
    );
}

#[test]
fn a_built_in_wins_over_a_custom_command_of_its_name() {
    let mut fixture = Fixture::new();
    fixture.project_command("cost.md", "Tell me what it cost.");
    assert_eq!(fixture.submit("/cost"), Vec::<Op>::new());
    assert!(fixture.transcript().contains("Total cost:"));
}
