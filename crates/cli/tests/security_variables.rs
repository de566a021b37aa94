//! Issue 21, class 3 through the real binary: in `cairn -p`, default mode, with
//! `--allowedTools` allowing every command the call uses, a command that points HOME,
//! `XDG_CONFIG_HOME` or `GIT_CONFIG_GLOBAL` at a planted git config (by a prefix, `export`,
//! `set -a`, `${X:=…}`, `read`, `printf -v`, a loop), or that reads through
//! `/proc/self/fd/N` or `/proc/self/cwd`, is refused, and the planted program never runs; a
//! variable not known to be harmless given to a command is refused too, while `LC_ALL=C`
//! and shell variables still run. Each scenario runs with the sandbox on and with
//! `sandbox.enabled: false` in the user's settings: the analysis alone must hold.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use cairn_test_support::{RecordedRequest, Reply};
use serde_json::json;

mod support;
use support::{Harness, WAIT, tool_result};

/// The two configurations every scenario runs under.
#[derive(Debug, Clone, Copy)]
enum Sandbox {
    On,
    Off,
}

const SANDBOXES: [Sandbox; 2] = [Sandbox::On, Sandbox::Off];

fn harness(sandbox: Sandbox) -> Harness {
    let h = Harness::new();
    if let Sandbox::Off = sandbox {
        let dir = h.home.path().join(".claude");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("settings.json"),
            json!({"sandbox": {"enabled": false}}).to_string(),
        )
        .unwrap();
    }
    h
}

/// Runs `cairn -p` with `--allowedTools rules` (none when empty), the model calling Bash
/// once per command.
fn run(h: &Harness, rules: &str, commands: &[String]) -> Vec<RecordedRequest> {
    for (n, command) in commands.iter().enumerate() {
        h.server.push(Reply::tool_use(
            &format!("t{n}"),
            "Bash",
            json!({ "command": command }),
        ));
    }
    h.server.push(Reply::text("done"));
    let mut command = h.command();
    command.args(["-p", "go"]);
    if !rules.is_empty() {
        command.args(["--allowedTools", rules]);
    }
    let output = command.output().unwrap();
    assert!(output.status.success(), "{output:?}");
    h.server.wait_for_requests(commands.len() + 1, WAIT)
}

fn assert_refused(requests: &[RecordedRequest], n: usize, command: &str, sandbox: Sandbox) {
    let (is_error, text) = tool_result(requests, n);
    assert!(
        is_error && text.contains("nobody can be asked in cairn -p"),
        "{sandbox:?}: {command}: {text}"
    );
}

/// A git config whose alias `l` runs a program that creates `marker`, in `planted/.gitconfig`,
/// `xdg/git/config` and `planted/global`.
fn plant_git_config(h: &Harness) -> std::path::PathBuf {
    let marker = h.home.path().join("marker");
    let config = format!("[alias]\n\tl = !touch {}\n", marker.display());
    for file in ["planted/.gitconfig", "xdg/git/config", "planted/global"] {
        let path = h.path(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, &config).unwrap();
    }
    marker
}

#[test]
fn configuration_variables_pointed_at_a_planted_config_are_refused() {
    let commands: Vec<String> = [
        "HOME=$PWD/planted git l",
        "export XDG_CONFIG_HOME=$PWD/xdg; git l",
        "set -a; GIT_CONFIG_GLOBAL=$PWD/planted/global; git l",
        "unset XDG_CONFIG_HOME; : \"${XDG_CONFIG_HOME:=$PWD/xdg}\"; export XDG_CONFIG_HOME; git l",
        "read -r HOME <<< \"$PWD/planted\"; git l",
        "printf -v HOME %s \"$PWD/planted\"; git l",
        "for HOME in \"$PWD/planted\"; do git l; done",
        "env GIT_CONFIG_GLOBAL=planted/global git l",
    ]
    .map(String::from)
    .to_vec();
    for sandbox in SANDBOXES {
        let h = harness(sandbox);
        let marker = plant_git_config(&h);
        let requests = run(
            &h,
            "Bash(git:*),Bash(export:*),Bash(set:*),Bash(unset:*),Bash(::*),Bash(read:*),\
             Bash(printf:*),Bash(env:*)",
            &commands,
        );
        for (n, command) in commands.iter().enumerate() {
            assert_refused(&requests, n + 1, command, sandbox);
        }
        assert!(!marker.exists(), "{sandbox:?}: the planted program ran");
    }
}

#[test]
fn paths_through_the_shells_own_links_are_refused() {
    for sandbox in SANDBOXES {
        let h = harness(sandbox);
        let home = h.home.path().canonicalize().unwrap();
        let work = h.work.path().canonicalize().unwrap();
        std::fs::write(home.join("secret.txt"), "cairn-e2e-fd-secret-2718\n").unwrap();
        std::os::unix::fs::symlink("/proc/self/cwd", work.join("here")).unwrap();
        let home_name = home.file_name().unwrap().to_string_lossy().into_owned();
        let commands = vec![
            format!("exec 5<.; cd /; cat /proc/self/fd/5/../{home_name}/secret.txt"),
            format!(
                "exec {{dir}}<{}; cat /dev/fd/$dir/secret.txt",
                home.display()
            ),
            "cd ~ && cat /proc/self/cwd/secret.txt".to_owned(),
            format!("cd ~ && cat {}/here/secret.txt", work.display()),
            "cd ~ && cp /proc/self/cwd/secret.txt /dev/stdout".to_owned(),
        ];
        let requests = run(
            &h,
            "Bash(cat:*),Bash(cd:*),Bash(exec:*),Bash(cp:*)",
            &commands,
        );
        for (n, command) in commands.iter().enumerate() {
            assert_refused(&requests, n + 1, command, sandbox);
        }
        for (n, request) in requests.iter().enumerate() {
            assert!(
                !request
                    .body
                    .to_string()
                    .contains("cairn-e2e-fd-secret-2718"),
                "{sandbox:?}: request {n} carries the secret"
            );
        }
    }
}

#[test]
fn variables_not_known_to_be_harmless_are_refused_and_everyday_ones_run() {
    for sandbox in SANDBOXES {
        let h = harness(sandbox);
        std::fs::write(h.path("list.txt"), "b\na\n").unwrap();
        let commands: Vec<String> = [
            "SORT_HELPER=./x sort list.txt",
            "export TOOL_OPTS=--exec=touch; sort list.txt",
            "TMPDIR=/tmp/elsewhere; sort list.txt",
            "LC_ALL=C sort list.txt",
            "x=list.txt; TZ=UTC cat \"$x\"",
            "for f in *.txt; do wc -l \"$f\"; done",
        ]
        .map(String::from)
        .to_vec();
        let requests = run(&h, "", &commands);
        for (n, command) in commands.iter().enumerate().take(3) {
            assert_refused(&requests, n + 1, command, sandbox);
        }
        let ran: Vec<(bool, String)> = (4..=6)
            .map(|n| {
                let (is_error, text) = tool_result(&requests, n);
                (is_error, text.trim().to_owned())
            })
            .collect();
        assert_eq!(
            ran,
            [
                (false, "a\nb".to_owned()),
                (false, "b\na".to_owned()),
                (false, "2 list.txt".to_owned()),
            ],
            "{sandbox:?}"
        );
    }
}

/// The control: let through (`bypassPermissions`, no sandbox), the same command really runs
/// the planted program, so the refusals above are what kept it from running.
#[test]
fn let_through_the_planted_config_does_run_its_program() {
    let h = harness(Sandbox::Off);
    let marker = plant_git_config(&h);
    h.server.push(Reply::tool_use(
        "t0",
        "Bash",
        json!({ "command": "HOME=$PWD/planted git l" }),
    ));
    h.server.push(Reply::text("done"));
    let output = h
        .command()
        .args(["-p", "go", "--permission-mode", "bypassPermissions"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    h.server.wait_for_requests(2, WAIT);
    assert!(marker.exists(), "the planted program did not run");
}
