//! Issue 11, class 5: destructive actions are judged before allow rules. `find` that deletes
//! or writes files or runs a writer, `xargs` with a writer, `git -c`/`--config-env` keys
//! that run programs, `git clean`, `git reset --hard`, `git checkout`/`restore` of files,
//! `git push --mirror`/`--delete`, package managers told which shell runs their scripts,
//! `rsync --delete`, `tar` running programs. Each instance is analysed and put through the
//! real gate in `cairn -p` with a rule that allows the command: the gate must refuse.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

mod security_support;

use cairn_shell::BashVerdict::{self, Destructive, NeedsApproval, ReadOnly, Unanalysable};
use pretty_assertions::assert_eq;
use security_support::{World, kind};

/// The allow rules of the issue's sandbox-off experiment; every case adds its own.
const ISSUE_RULES: &[&str] = &[
    "Bash(echo *)",
    "Bash(cat *)",
    "Bash(ls *)",
    "Bash(find *)",
    "Bash(git *)",
    "Bash(npm test:*)",
];

/// (command, the rule that allows it, the verdict, the reason that must be among the
/// analysis's reasons).
const CASES: &[(&str, &str, BashVerdict, &str)] = &[
    (
        "find src -name '*.tmp' -delete",
        "Bash(find *)",
        Destructive,
        "find -delete removes every file it matches under src",
    ),
    (
        "find . -type f -fprintf listing.txt '%p\\n'",
        "Bash(find *)",
        Destructive,
        "find -fprintf writes the list of files found to listing.txt",
    ),
    (
        "find . -name '*.rs' -exec sed -i s/unsafe/safe/ {} +",
        "Bash(find *)",
        Destructive,
        "find -exec runs `sed`, which is not read-only, on every file found",
    ),
    (
        "find . -name '*.bak' -execdir mv {} old \\;",
        "Bash(find *)",
        Destructive,
        "find -execdir runs `mv`, which is not read-only, on every file found",
    ),
    (
        "git ls-files | xargs chmod +x",
        "Bash(xargs *)",
        Destructive,
        "xargs runs `chmod`, which is not read-only, on whatever its input names",
    ),
    (
        "echo ~/.ssh/id_rsa | xargs cat",
        "Bash(xargs *)",
        Unanalysable,
        "xargs gives `cat` arguments read from its input, which may name files outside the \
         workspace",
    ),
    (
        "git -c alias.st='!touch pwned' st",
        "Bash(git *)",
        Destructive,
        "git -c alias.st makes git run a program given on the command line",
    ),
    (
        "git -c core.fsmonitor=./watch.sh status",
        "Bash(git *)",
        Destructive,
        "git -c core.fsmonitor makes git run a program given on the command line",
    ),
    (
        "git -c diff.img.textconv=./conv.sh diff",
        "Bash(git *)",
        Destructive,
        "git -c diff.img.textconv makes git run a program given on the command line",
    ),
    (
        "git --config-env=core.sshCommand=EVIL fetch",
        "Bash(git *)",
        Destructive,
        "git --config-env core.sshcommand makes git run a program given on the command line",
    ),
    (
        "git -c pull.rebase=true log",
        "Bash(git *)",
        Unanalysable,
        "git -c pull.rebase changes git's configuration in a way cairn cannot judge",
    ),
    (
        "env GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0=./pwn.sh git log",
        "Bash(env *)",
        Unanalysable,
        "sets GIT_CONFIG_COUNT, which changes what the commands run",
    ),
    (
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0=./pwn.sh git status",
        "Bash(git *)",
        Unanalysable,
        "sets GIT_CONFIG_KEY_0, which changes what the commands run",
    ),
    (
        "npm_config_script_shell=./pwn.sh npm test",
        "Bash(npm test:*)",
        Unanalysable,
        "sets npm_config_script_shell, which changes what the commands run",
    ),
    (
        "env -i PATH=/x ls",
        "Bash(env *)",
        Unanalysable,
        "sets PATH, which changes what the commands run",
    ),
    (
        "git config core.hooksPath .githooks",
        "Bash(git *)",
        Destructive,
        "git config core.hookspath makes every later git command in the repository run a \
         program, cairn's own included",
    ),
    (
        "git clean -ffdx",
        "Bash(git *)",
        Destructive,
        "git clean deletes untracked files",
    ),
    (
        "git reset --hard origin/main",
        "Bash(git *)",
        Destructive,
        "git reset --hard discards uncommitted changes",
    ),
    (
        "git checkout HEAD -- src",
        "Bash(git *)",
        Destructive,
        "git checkout of files discards their uncommitted changes",
    ),
    (
        "git restore .",
        "Bash(git *)",
        Destructive,
        "git restore discards uncommitted changes to the files",
    ),
    (
        "git push --mirror backup",
        "Bash(git *)",
        Destructive,
        "git push --mirror overwrites and deletes every ref on the remote",
    ),
    (
        "git push origin --delete feature",
        "Bash(git *)",
        Destructive,
        "git push deletes branches on the remote",
    ),
    (
        "npm test --script-shell=./pwn.sh",
        "Bash(npm test:*)",
        Destructive,
        "npm --script-shell makes npm run a program of the command's choosing",
    ),
    (
        "npm config set script-shell ./pwn.sh",
        "Bash(npm config:*)",
        Destructive,
        "npm config set script-shell makes every later npm script run a program of the \
         command's choosing",
    ),
    (
        "rsync -a --delete-after src/ mirror/",
        "Bash(rsync *)",
        Destructive,
        "rsync --delete-after removes files the copy does not keep",
    ),
    (
        "tar -cf out.tar --checkpoint=1 --checkpoint-action=exec=./pwn.sh src",
        "Bash(tar *)",
        Destructive,
        "tar --checkpoint-action=exec runs another program",
    ),
    (
        "tar -xf in.tar --to-command='sh -c \"cat > $TAR_FILENAME\"'",
        "Bash(tar *)",
        Destructive,
        "tar --to-command runs another program",
    ),
];

#[test]
fn destructive_actions_are_recognised_by_class() {
    let world = World::new();
    let mut wrong = Vec::new();
    for (command, _, verdict, reason) in CASES {
        let analysis = world.analyze(command);
        if analysis.verdict != *verdict || !analysis.reasons.iter().any(|r| r == reason) {
            wrong.push(format!(
                "{command:?}: got {:?} {:?}",
                analysis.verdict, analysis.reasons
            ));
        }
    }
    assert_eq!(wrong, Vec::<String>::new());
}

#[test]
fn the_gate_refuses_each_in_print_mode_although_a_rule_allows_the_command() {
    let world = World::new();
    let mut wrong = Vec::new();
    for (command, rule, _, _) in CASES {
        let mut rules = ISSUE_RULES.to_vec();
        rules.push(rule);
        let verdict = world.check(&rules, command);
        if kind(&verdict) != "deny" {
            wrong.push(format!("{command:?}: {verdict:?}"));
        }
    }
    assert_eq!(wrong, Vec::<String>::new());
}

#[test]
fn the_harmless_neighbours_stay_as_they_were() {
    let world = World::new();
    world.file("notes.txt", "x");
    let cases = [
        ("find . -name '*.rs' -exec grep -l TODO {} +", NeedsApproval),
        ("find src -name '*.tmp' -print", ReadOnly),
        ("git -c color.ui=always log --oneline", ReadOnly),
        ("git clean -n -d", ReadOnly),
        ("git checkout -b topic", NeedsApproval),
        ("git restore --staged notes.txt", NeedsApproval),
        ("git push origin main", NeedsApproval),
        ("npm test -- --watch=false", NeedsApproval),
        ("rsync -a src/ mirror/", NeedsApproval),
        // Reading is harmless only where the files are known.
        ("git ls-files | xargs grep -l TODO", Unanalysable),
        ("find . -name '*.log' | xargs", NeedsApproval),
    ];
    let seen: Vec<(&str, BashVerdict)> = cases
        .iter()
        .map(|(command, _)| (*command, world.analyze(command).verdict))
        .collect();
    assert_eq!(seen, cases);
    // `git checkout FILE` of a file that exists discards its changes; of a branch it does not.
    assert_eq!(world.analyze("git checkout notes.txt").verdict, Destructive);
    assert_eq!(world.analyze("git checkout topic").verdict, NeedsApproval);
}

#[test]
fn the_git_config_file_written_is_named_so_protected_files_are_seen() {
    let world = World::new();
    world.file(".git/HEAD", "ref: refs/heads/main\n");
    world.file("src/lib.rs", "");
    let in_src = world.workspace.join("src");
    let roots = [world.workspace.clone()];
    let analysis = cairn_shell::analyze(
        "git config user.name someone",
        &cairn_shell::BashContext {
            cwd: &in_src,
            workspace_roots: &roots,
            home: &world.home,
        },
    );
    assert_eq!(
        analysis.written_paths,
        [world.workspace.join(".git/config")]
    );
    assert_eq!(
        world
            .analyze("git config --global core.editor vim")
            .written_paths,
        [world.home.join(".gitconfig")]
    );
}
