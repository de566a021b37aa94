//! Claude Code settings that carry over, seen from `cairn -p` against the scripted server:
//! `apiKeyHelper`, `outputStyle`, `includeCoAuthoredBy`, and the `opusplan`/`default` aliases.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use cairn_test_support::Reply;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

mod support;
use support::Harness;

/// A helper that counts its runs in `helper-runs` and prints `key-<n>`.
const COUNTING_HELPER: &str =
    "n=$(( $(cat helper-runs 2>/dev/null || echo 0) + 1 )); echo $n > helper-runs; echo key-$n";

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn run(h: &Harness, args: &[&str], without_key: bool) -> Run {
    let mut command = h.command();
    if without_key {
        command.env_remove("ANTHROPIC_API_KEY");
    }
    let output = command.args(args).output().unwrap();
    Run {
        code: output.status.code(),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

/// Writes the user's own `~/.claude/settings.json`: a project's file may not choose the
/// credential (`apiKeyHelper`) in `-p` (security_hostile_settings.rs).
fn user_settings(h: &Harness, json: Value) {
    let dir = h.home.path().join(".claude");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("settings.json"), json.to_string()).unwrap();
}

/// The system prompt of request `n`, both halves as one text.
fn system_text(h: &Harness, n: usize) -> String {
    let requests = h.server.requests();
    requests[n].body["system"]
        .as_array()
        .unwrap()
        .iter()
        .map(|block| block["text"].as_str().unwrap())
        .collect::<Vec<_>>()
        .join("\n\n")
}

#[test]
fn the_api_key_helpers_key_is_sent_and_renewed_after_a_401() {
    let h = Harness::new();
    user_settings(&h, json!({"apiKeyHelper": COUNTING_HELPER}));
    h.server.push(Reply::error(
        401,
        "authentication_error",
        "invalid x-api-key",
    ));
    h.server.push(Reply::text("hello"));
    let run = run(
        &h,
        &["-p", "hi", "--output-format", "stream-json", "--verbose"],
        true,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let lines: Vec<Value> = run
        .stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines[0]["subtype"], json!("init"));
    assert_eq!(lines[0]["apiKeySource"], json!("apiKeyHelper"));
    assert_eq!(lines.last().unwrap()["result"], json!("hello"));
    let sent: Vec<Option<String>> = h
        .server
        .requests()
        .iter()
        .map(|request| request.header("x-api-key").map(str::to_owned))
        .collect();
    assert_eq!(sent, [Some("key-1".into()), Some("key-2".into())]);
    assert!(
        !run.stdout.contains("key-") && !run.stderr.contains("key-"),
        "the key was shown: {}{}",
        run.stdout,
        run.stderr
    );
}

#[test]
fn a_key_variable_wins_over_the_helper_which_then_never_runs() {
    let h = Harness::new();
    user_settings(&h, json!({"apiKeyHelper": COUNTING_HELPER}));
    h.server.push(Reply::text("hello"));
    let run = run(&h, &["-p", "hi"], false);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(
        h.server.requests()[0].header("x-api-key"),
        Some("sk-test-key")
    );
    assert!(!h.path("helper-runs").exists());
}

#[test]
fn a_failing_helper_is_an_error_naming_the_setting_and_never_its_output() {
    let h = Harness::new();
    user_settings(
        &h,
        json!({
        "apiKeyHelper": "echo sk-half-printed-SECRET; echo 'vault: token expired' >&2; exit 2"
        }),
    );
    let run = run(&h, &["-p", "hi", "--output-format", "json"], true);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    let result: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(result["is_error"], json!(true));
    assert_eq!(
        result["result"],
        json!(
            "the apiKeyHelper command failed: exited with status 2 (its error output: vault: \
             token expired); check the apiKeyHelper setting"
        )
    );
    assert!(!run.stdout.contains("SECRET") && !run.stderr.contains("SECRET"));
    assert_eq!(h.server.requests().len(), 0);
}

#[test]
fn commit_guidance_asks_for_the_co_authored_by_trailer_unless_turned_off() {
    let trailer = "Co-Authored-By: cairn <noreply@cairn.invalid>";
    let h = Harness::new();
    h.server.push(Reply::text("ok"));
    let on = run(&h, &["-p", "hi"], false);
    assert_eq!(on.code, Some(0), "{}", on.stderr);
    let system = system_text(&h, 0);
    assert!(system.contains("# Committing"), "{system}");
    assert!(system.contains(trailer), "{system}");

    h.settings(json!({"includeCoAuthoredBy": false}));
    h.server.push(Reply::text("ok"));
    let off = run(&h, &["-p", "hi"], false);
    assert_eq!(off.code, Some(0), "{}", off.stderr);
    let system = system_text(&h, 1);
    assert!(system.contains("# Committing"), "{system}");
    assert!(!system.contains("Co-Authored-By"), "{system}");
}

#[test]
fn an_output_style_from_the_project_goes_in_the_system_prompt() {
    let h = Harness::new();
    let styles = h.path(".claude/output-styles");
    std::fs::create_dir_all(&styles).unwrap();
    std::fs::write(
        styles.join("haiku.md"),
        "---\nname: Haiku\ndescription: Answers in verse\n---\n\nAnswer every question as a haiku.\n",
    )
    .unwrap();
    h.settings(json!({"outputStyle": "Haiku"}));
    h.server.push(Reply::text("ok"));
    let run = run(&h, &["-p", "hi"], false);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let system = system_text(&h, 0);
    assert!(
        system.contains(
            "# Output style: Haiku\nThe user chose this style for your answers; it takes \
             precedence over the tone guidance above where they differ.\n\nAnswer every \
             question as a haiku."
        ),
        "{system}"
    );
    assert_eq!(run.stderr, "");
}

#[test]
fn a_built_in_output_style_is_used_and_an_unknown_one_is_a_warning_naming_it() {
    let h = Harness::new();
    h.settings(json!({"outputStyle": "explanatory"}));
    h.server.push(Reply::text("ok"));
    let built_in = run(&h, &["-p", "hi"], false);
    assert_eq!(built_in.code, Some(0), "{}", built_in.stderr);
    assert!(system_text(&h, 0).contains("# Output style: Explanatory\n"));

    h.settings(json!({"outputStyle": "Pirate"}));
    h.server.push(Reply::text("ok"));
    let unknown = run(&h, &["-p", "hi"], false);
    assert_eq!(unknown.code, Some(0), "{}", unknown.stderr);
    assert_eq!(
        unknown.stderr,
        "warning: the output style \"Pirate\" (outputStyle in the settings) was not found in \
         .claude/output-styles/ or ~/.claude/output-styles/, and is not one of default, \
         Explanatory, Learning: cairn's default style is used\n"
    );
    assert!(!system_text(&h, 1).contains("# Output style"));
}

#[test]
fn the_default_alias_is_sonnet_and_opusplan_is_opus_only_in_plan_mode() {
    let h = Harness::new();
    for (model, mode) in [
        ("default", "default"),
        ("opusplan", "acceptEdits"),
        ("opusplan", "plan"),
    ] {
        h.server.push(Reply::text("ok"));
        let run = run(
            &h,
            &["-p", "hi", "--model", model, "--permission-mode", mode],
            false,
        );
        assert_eq!(run.code, Some(0), "{}", run.stderr);
    }
    let models: Vec<Value> = h
        .server
        .requests()
        .iter()
        .map(|request| request.body["model"].clone())
        .collect();
    assert_eq!(
        models,
        [
            json!("claude-sonnet-4-5"),
            json!("claude-sonnet-4-5"),
            json!("claude-opus-4-5")
        ]
    );
}
