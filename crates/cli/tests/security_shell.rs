//! Issue 11, classes 4 and 7 through the real binary: a command cannot make the shell's next
//! command run somewhere cairn does not know about, and no process cairn starts (commands,
//! hooks, custom-command expansions) can hand the model cairn's API key. What the model could
//! have learnt is judged by what reached the scripted server: every request body.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Output, Stdio};

use cairn_test_support::{RecordedRequest, Reply};
use serde_json::{Value, json};

mod support;
use support::{Harness, WAIT};

/// The API key cairn is started with in these tests.
const API_KEY: &str = "sk-test-secret";

fn run(h: &Harness, args: &[&str]) -> Output {
    let output = h
        .command()
        .env("ANTHROPIC_API_KEY", API_KEY)
        .args(args)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    output
}

/// The text of the tool result the model received in request `n` (0-based).
fn tool_result_text(requests: &[RecordedRequest], n: usize) -> String {
    let messages = requests[n].body["messages"].as_array().unwrap();
    let result = &messages.last().unwrap()["content"][0];
    assert_eq!(result["type"], json!("tool_result"), "{result}");
    match &result["content"] {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// Fails if `secret` is anywhere in any request the server received.
fn assert_never_sent(requests: &[RecordedRequest], secret: &str) {
    for (n, request) in requests.iter().enumerate() {
        let body = request.body.to_string();
        assert!(
            !body.contains(secret),
            "request {n} carries {secret:?}: {body}"
        );
    }
}

/// Scripts the attack of issue 11: a command that defines `pwd` to name a directory outside
/// the project holding `secret.txt` and goes there, then a read of `secret.txt` by its
/// relative name.
/// Returns the requests the server received and the project directory.
fn shadowed_pwd_then_relative_read(mode: &[&str]) -> (Vec<RecordedRequest>, String) {
    let h = Harness::new();
    let outside = tempfile::tempdir().unwrap();
    let outside = outside.path().canonicalize().unwrap();
    std::fs::write(outside.join("secret.txt"), "cairn-e2e-secret-3141\n").unwrap();
    let project = h.work.path().canonicalize().unwrap();
    h.server.push(Reply::tool_use(
        "t1",
        "Bash",
        // The function names the outside directory, as an exit trap running `pwd` would
        // have recorded it, and the `cd` really goes there.
        json!({"command": format!(
            "pwd() {{ echo '{outside}'; }}; cd '{outside}'",
            outside = outside.display()
        )}),
    ));
    h.server.push(Reply::tool_use(
        "t2",
        "Bash",
        json!({"command": "cat secret.txt"}),
    ));
    h.server.push(Reply::text("done"));
    run(&h, &[&["-p", "go"][..], mode].concat());
    let requests = h.server.wait_for_requests(3, WAIT);
    assert_never_sent(&requests, "cairn-e2e-secret-3141");
    let moved = tool_result_text(&requests, 1);
    if mode.contains(&"bypassPermissions") {
        // It ran, and was told the shell is back in the project.
        assert!(
            moved.ends_with(&format!(
                "Shell cwd was reset to {}: the command left it in {}, which is outside the \
                 project directory and the added directories.",
                project.display(),
                outside.display()
            )),
            "{moved}"
        );
    }
    (requests, project.display().to_string())
}

#[test]
fn a_shadowed_pwd_cannot_send_the_next_relative_read_outside() {
    let (requests, _) =
        shadowed_pwd_then_relative_read(&["--permission-mode", "bypassPermissions"]);
    assert_eq!(
        tool_result_text(&requests, 2),
        "Exit code 1\n[stderr]\ncat: secret.txt: No such file or directory"
    );
}

#[test]
fn with_bash_allowed_in_the_default_mode_the_secret_stays_unread_too() {
    // Whether the gate lets the first command run is its business; either way the read
    // either runs in the project or is refused.
    let (requests, project) = shadowed_pwd_then_relative_read(&["--allowedTools", "Bash"]);
    let read = tool_result_text(&requests, 2);
    assert!(
        read.ends_with("cat: secret.txt: No such file or directory")
            || requests[2].body["messages"]
                .to_string()
                .contains("is_error"),
        "in {project}: {read}"
    );
}

#[test]
fn commands_cannot_print_the_api_key() {
    let h = Harness::new();
    h.settings(json!({"env": {"CAIRN_TEST_SETTING": "from-settings"}}));
    h.server.push(Reply::tool_use(
        "t1",
        "Bash",
        json!({"command": "printenv ANTHROPIC_API_KEY; env | sort; \
                           cat /proc/self/environ | tr '\\0' '\\n'"}),
    ));
    h.server.push(Reply::text("done"));
    run(&h, &["-p", "go", "--permission-mode", "bypassPermissions"]);

    let requests = h.server.wait_for_requests(2, WAIT);
    assert_never_sent(&requests, API_KEY);
    let listing = tool_result_text(&requests, 1);
    // The commands ran and saw the rest of the environment.
    assert!(
        listing.contains("CAIRN_TEST_SETTING=from-settings"),
        "{listing}"
    );
    assert!(listing.contains("ANTHROPIC_BASE_URL=http://"), "{listing}");
    assert!(!listing.contains("ANTHROPIC_API_KEY="), "{listing}");
}

/// `h.command()` run as an ordinary user. Root's CAP_SYS_PTRACE reads any process's
/// environment whatever the process does, so what cairn does against its commands reading
/// its own is only seen from a user's: when the tests run as root, cairn runs as `nobody`
/// (through `setpriv`), in directories opened up for it.
fn command_as_ordinary_user(h: &Harness) -> Command {
    let base = h.command();
    if !rustix::process::geteuid().is_root() {
        return base;
    }
    for dir in [h.home.path(), h.work.path()] {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    }
    let mut command = Command::new("setpriv");
    command
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(base.get_program())
        .args(base.get_args())
        .current_dir(h.work.path())
        .stdin(Stdio::null());
    for (name, value) in base.get_envs() {
        match value {
            Some(value) => command.env(name, value),
            None => command.env_remove(name),
        };
    }
    command
}

#[test]
fn cairns_own_environment_is_closed_to_its_commands() {
    let h = Harness::new();
    // Without the sandbox, whose Landlock domain would also keep a command from reading its
    // parent: cairn must close itself, for machines where the sandbox is off or unavailable.
    h.settings(json!({"sandbox": {"enabled": false}}));
    h.server.push(Reply::tool_use(
        "t1",
        "Bash",
        json!({"command": "id -u; cat /proc/$PPID/environ | tr '\\0' '\\n'"}),
    ));
    h.server.push(Reply::text("done"));
    let output = command_as_ordinary_user(&h)
        .env("ANTHROPIC_API_KEY", API_KEY)
        .args(["-p", "go", "--permission-mode", "bypassPermissions"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");

    let requests = h.server.wait_for_requests(2, WAIT);
    assert_never_sent(&requests, API_KEY);
    let read = tool_result_text(&requests, 1);
    assert!(!read.starts_with("0\n"), "the command ran as root: {read}");
    assert!(read.contains("Permission denied"), "{read}");
}

#[test]
fn hooks_and_custom_command_expansions_cannot_send_the_api_key() {
    let h = Harness::new();
    let hook_env = h.path("hook-env.txt");
    h.settings(json!({"hooks": {
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command":
            "printenv ANTHROPIC_API_KEY; echo hook-ran"}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command":
            format!("env > '{}'", hook_env.display())}]}]
    }}));
    let commands = h.path(".claude/commands");
    std::fs::create_dir_all(&commands).unwrap();
    std::fs::write(
        commands.join("leak.md"),
        "Look at this:\n!`printenv ANTHROPIC_API_KEY; echo expansion-ran`\n",
    )
    .unwrap();
    h.server
        .push(Reply::tool_use("t1", "Bash", json!({"command": "true"})));
    h.server.push(Reply::text("done"));
    run(
        &h,
        &["-p", "/leak", "--permission-mode", "bypassPermissions"],
    );

    let requests = h.server.wait_for_requests(2, WAIT);
    assert_never_sent(&requests, API_KEY);
    let first = requests[0].body["messages"].to_string();
    assert!(first.contains("hook-ran"), "{first}");
    assert!(first.contains("expansion-ran"), "{first}");
    let hook_env = std::fs::read_to_string(hook_env).unwrap();
    assert!(hook_env.contains("ANTHROPIC_BASE_URL="), "{hook_env}");
    assert!(!hook_env.contains(API_KEY), "{hook_env}");
}

#[test]
fn a_key_in_the_settings_env_is_used_and_never_reaches_a_command() {
    let h = Harness::new();
    let settings_key = "sk-from-settings-only";
    // The user's own settings: a project's file may not choose the credential in -p.
    h.user_settings(json!({"env": {"ANTHROPIC_API_KEY": settings_key}}));
    h.server.push(Reply::tool_use(
        "t1",
        "Bash",
        json!({"command": "printenv ANTHROPIC_API_KEY; echo listed"}),
    ));
    h.server.push(Reply::text("done"));
    let output = h
        .command()
        .env_remove("ANTHROPIC_API_KEY")
        .args(["-p", "go", "--permission-mode", "bypassPermissions"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");

    let requests = h.server.wait_for_requests(2, WAIT);
    let sent_key = requests[0]
        .headers
        .iter()
        .find(|(name, _)| name == "x-api-key")
        .map(|(_, value)| value.as_str());
    assert!(
        sent_key == Some(settings_key),
        "the request did not carry the settings' key"
    );
    assert_never_sent(&requests, settings_key);
    assert_eq!(tool_result_text(&requests, 1), "listed");
}
