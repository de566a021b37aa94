//! Issue 21, point 2 through the real binary in `-p`: sed scripts, awk programs, jq filters,
//! find expressions, xargs and wrappers are refused when they write, run or read beyond the
//! workspace, with the sandbox on and off (the analysis alone must hold), even with an allow
//! rule for the command alone when what they do is beyond any such rule; and a script the
//! model first writes into the memory directory (written unasked) and then loads with
//! `sed -f`/`awk -f` is refused. Nothing changes on disk and no secret reaches the model.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::path::{Path, PathBuf};

use cairn_test_support::Reply;
use serde_json::{Value, json};

mod support;
use support::Harness;

const SECRET: &str = "cairn-scripts-secret-2718";

/// A project with a few files, a secret beside it (outside the workspace), and a memory
/// directory, with the sandbox on or off in the user's settings.
struct World {
    h: Harness,
    memory: PathBuf,
    secret: PathBuf,
}

impl World {
    fn new(sandbox: bool) -> World {
        let h = Harness::new();
        std::fs::write(h.path("f"), "alpha\nbeta\n").unwrap();
        std::fs::write(h.path("package.json"), "{\"name\": \"x\"}\n").unwrap();
        std::fs::create_dir_all(h.path(".git/hooks")).unwrap();
        let memory = h.home.path().join("memories");
        std::fs::create_dir_all(&memory).unwrap();
        std::fs::write(memory.join("MEMORY.md"), "").unwrap();
        let secret = h.home.path().join("secret.txt");
        std::fs::write(&secret, format!("{SECRET}\n")).unwrap();
        let claude = h.home.path().join(".claude");
        std::fs::create_dir_all(&claude).unwrap();
        std::fs::write(
            claude.join("settings.json"),
            json!({"autoMemoryDirectory": memory, "sandbox": {"enabled": sandbox}}).to_string(),
        )
        .unwrap();
        h.server
            .reply_to_side_requests(vec![Reply::text("{\"selected_memories\": []}")]);
        World { h, memory, secret }
    }

    /// Runs `cairn -p` with `args`, the model making each call in turn then answering;
    /// returns the tool result of each call.
    fn run(&self, calls: &[(&str, Value)], args: &[&str]) -> Vec<Value> {
        for (n, (tool, input)) in calls.iter().enumerate() {
            self.h
                .server
                .push(Reply::tool_use(&format!("call{n}"), tool, input.clone()));
        }
        self.h.server.push(Reply::text("done"));
        let before = main_requests(&self.h).len();
        let output = self
            .h
            .command()
            .args(["-p", "go"])
            .args(args)
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        // The binary has exited: every request it made is recorded.
        let requests = main_requests(&self.h);
        assert!(requests.len() > before + calls.len(), "{output:?}");
        for request in &requests {
            assert!(
                !request.body.to_string().contains(SECRET),
                "the secret reached the model"
            );
        }
        (0..calls.len())
            .map(|n| {
                let messages = requests[before + n + 1].body["messages"]
                    .as_array()
                    .unwrap();
                messages.last().unwrap()["content"][0].clone()
            })
            .collect()
    }
}

/// The requests of the conversation itself (recall's side requests offer no tools).
fn main_requests(h: &Harness) -> Vec<cairn_test_support::RecordedRequest> {
    h.server
        .requests()
        .into_iter()
        .filter(|request| request.body.get("tools").is_some())
        .collect()
}

/// Every file below `dir` with its contents.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                files.push((path.clone(), std::fs::read(&path).unwrap()));
            }
        }
    }
    files.sort();
    files
}

fn bash(command: &str) -> (&'static str, Value) {
    ("Bash", json!({ "command": command }))
}

/// Commands that must be refused in the default mode with no rules, per class, each given
/// the secret's path where it reads one.
fn refused_without_rules(secret: &Path) -> Vec<String> {
    let secret = secret.display();
    vec![
        // sed
        format!("sed -n '1R {secret}' f"),
        "sed 's/x/y/;1e touch pwned-sed-e' f".to_owned(),
        "sed -n 's/a/b/w .git/hooks/pre-commit' f".to_owned(),
        "sed --in-pl=.orig 's/a/b/' f".to_owned(),
        // awk
        "awk 'BEGIN { system(\"touch pwned-awk\") }'".to_owned(),
        "awk '{ print | \"sh\" }' f".to_owned(),
        format!("awk 'BEGIN {{ getline l < \"{secret}\"; print l }}'"),
        "awk '{ print > \"pwned-awk-print\" }' f".to_owned(),
        // jq
        format!("jq -n --rawfile k {secret} '$k'"),
        "jq -L . -n 'import \"evil\" as e; e::x'".to_owned(),
        // find
        "find . -name f -fprint0 pwned-find".to_owned(),
        "find . -name f -execdir touch pwned-find-exec \\;".to_owned(),
        format!("find . -newer {secret} -name f"),
        // xargs and wrappers
        format!("xargs -a {secret} echo"),
        format!("timeout --kill-a 5 10 cat {secret}"),
        "nice --adj 5 touch pwned-nice".to_owned(),
    ]
}

fn assert_refused(results: &[Value], commands: &[String]) {
    for (result, command) in results.iter().zip(commands) {
        assert_eq!(result["is_error"], json!(true), "{command}: {result}");
        // Refused by the gate, not failed when run.
        let text = result["content"].to_string();
        assert!(
            text.contains("nobody can be asked in cairn -p")
                || text.contains("refused without asking"),
            "{command}: {text}"
        );
    }
}

#[test]
fn scripts_that_write_run_or_read_outside_are_refused_with_the_sandbox_on_and_off() {
    for sandbox in [true, false] {
        let world = World::new(sandbox);
        let commands = refused_without_rules(&world.secret);
        let calls: Vec<(&str, Value)> = commands.iter().map(|c| bash(c)).collect();
        let before = snapshot(world.h.work.path());
        let results = world.run(&calls, &["--permission-mode", "default"]);
        assert_refused(&results, &commands);
        assert_eq!(
            snapshot(world.h.work.path()),
            before,
            "sandbox {sandbox}: nothing changed on disk"
        );
    }
}

#[test]
fn a_rule_for_the_command_alone_lifts_no_code_command_or_outside_read() {
    let rules = "Bash(sed:*),Bash(awk:*),Bash(jq:*),Bash(find:*),Bash(timeout:*),Bash(nice:*)";
    for sandbox in [true, false] {
        let world = World::new(sandbox);
        std::fs::write(world.h.path("s.sed"), "1e touch pwned-sed-file\n").unwrap();
        let secret = world.secret.display();
        let commands = vec![
            "sed 's/x/y/;1e touch pwned-sed-e' f".to_owned(),
            "sed -f s.sed f".to_owned(),
            "awk 'BEGIN { system(\"touch pwned-awk\") }'".to_owned(),
            "awk 'BEGIN { f = \"x\"; print | \"touch pwned-awk-pipe\" }'".to_owned(),
            "jq -L . -n '.'".to_owned(),
            "find . -name f -execdir touch pwned-find-exec \\;".to_owned(),
            format!("timeout --kill-a 5 10 cat {secret}"),
            format!("nice --adj 5 cat {secret}"),
        ];
        let calls: Vec<(&str, Value)> = commands.iter().map(|c| bash(c)).collect();
        let before = snapshot(world.h.work.path());
        let results = world.run(&calls, &["--allowedTools", rules]);
        assert_refused(&results, &commands);
        assert_eq!(
            snapshot(world.h.work.path()),
            before,
            "sandbox {sandbox}: nothing changed on disk"
        );
    }
}

#[test]
fn a_script_written_into_the_memory_directory_is_not_loaded_unasked() {
    let rules = "Bash(sed:*),Bash(awk:*)";
    for sandbox in [true, false] {
        let world = World::new(sandbox);
        let sed_script = world.memory.join("notes.sed");
        let awk_script = world.memory.join("notes.awk");
        let calls = vec![
            (
                "Write",
                json!({"file_path": sed_script, "content": "1e touch pwned-memory-sed\n"}),
            ),
            (
                "Write",
                json!({"file_path": awk_script,
                       "content": "BEGIN { system(\"touch pwned-memory-awk\") }\n"}),
            ),
            bash(&format!("sed -f {} f", sed_script.display())),
            bash(&format!("awk -f {} f", awk_script.display())),
        ];
        let before = snapshot(world.h.work.path());
        for args in [
            &["--permission-mode", "default"][..],
            &["--allowedTools", rules],
        ] {
            // Each run writes the scripts afresh (Write changes a file only after a Read).
            let _ = std::fs::remove_file(&sed_script);
            let _ = std::fs::remove_file(&awk_script);
            let results = world.run(&calls, args);
            assert_ne!(results[0]["is_error"], json!(true), "{}", results[0]);
            assert_ne!(results[1]["is_error"], json!(true), "{}", results[1]);
            assert!(sed_script.exists() && awk_script.exists());
            assert_refused(
                &results[2..],
                &calls[2..]
                    .iter()
                    .map(|c| c.1.to_string())
                    .collect::<Vec<_>>(),
            );
        }
        assert_eq!(
            snapshot(world.h.work.path()),
            before,
            "sandbox {sandbox}: nothing ran"
        );
    }
}
