#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

//! Issue 21, point 2: script languages are parsed or not trusted. sed scripts, awk programs,
//! jq filters, find expressions, xargs and the wrappers are read-only only when every
//! command, function, primary and option in them is on an allowlist; the files they name are
//! judged as reads or writes; code read from a file is a program option no rule for the
//! command alone lifts. Then several of the attacks are run for real, to show that each did
//! write or run what the analysis refused.

mod bash_support;

use std::fs;
use std::path::Path;
use std::process::Command;

use bash_support::Sandbox;
use cairn_shell::BashVerdict::{self, Destructive, NeedsApproval, ReadOnly, Unanalysable};
use pretty_assertions::assert_eq;

/// A workspace with the files the everyday commands read.
fn sandbox() -> Sandbox {
    let sandbox = Sandbox::new();
    let workspace = &sandbox.workspace;
    fs::write(workspace.join("f"), "alpha:1:2\nbeta:3:4\n").unwrap();
    fs::write(workspace.join("notes.txt"), "foo\n").unwrap();
    fs::write(workspace.join("package.json"), "{\"name\": \"x\"}\n").unwrap();
    fs::write(workspace.join("Cargo.toml"), "[package]\n").unwrap();
    fs::write(workspace.join("src/a.rs"), "fn main() {}\n").unwrap();
    fs::write(workspace.join("a.txt"), "foo\n").unwrap();
    fs::write(workspace.join("b.txt"), "bar\n").unwrap();
    sandbox
}

/// Every command whose verdict differs from the one expected, with the reasons.
fn mismatches(sandbox: &Sandbox, cases: &[(&str, BashVerdict)]) -> Vec<String> {
    cases
        .iter()
        .filter_map(|(command, expected)| {
            let analysis = sandbox.analyze(command);
            (analysis.verdict != *expected).then(|| {
                format!(
                    "{command:?}: expected {expected:?}, got {:?} ({})",
                    analysis.verdict,
                    analysis.reasons.join("; ")
                )
            })
        })
        .collect()
}

const EVERYDAY: &[&str] = &[
    "sed -n '1,20p' f",
    "sed 's/a/b/g' f",
    "sed -E 's/(alpha|beta)+/x/2' f",
    "sed --expr='s/a/b/' --quiet f",
    "sed -e 1d -e '$d' f",
    "sed -n '/alpha/,/beta/{s/[^/]*$//;p}' f",
    "sed ':a;N;$!ba;s/\\n/ /g' f",
    "sed '$a\\' f",
    "sed -n '0~2p;$=' f",
    "sed '1i header; not a command' f",
    "sed 's/a/b/w /dev/stdout' f",
    "sed -n '1r notes.txt' f",
    "awk '{print $1}' f",
    "awk -F: 'NR>1 {s+=$3} END {print s}' f",
    "awk -F: -v OFS=, '{ $1 = toupper($1); print }' f",
    "awk 'BEGIN { FS = \":\" } { n[$1]++ } END { for (k in n) print k, n[k] > \"/dev/stderr\" }' f",
    "awk 'length($0) > 3 { print substr($0, 1, 3) }' f notes.txt",
    "awk '{ while ((getline line < \"notes.txt\") > 0) print line }' f",
    "gawk '{ print gensub(/a/, \"b\", \"g\") }' f",
    "mawk -W version",
    "awk '{ print }' n=1 f",
    "jq '.name' package.json",
    "jq -r '.[] | .id' f",
    "jq -n --arg x 1 --argjson y 2 '[$x, $y]'",
    "jq -rc --tab '.name' package.json",
    "jq --rawfile t notes.txt -n '$t'",
    "jq -n --args '$ARGS.positional' a /etc/passwd",
    "jq 'input_filename, $__loc__, env.HOME, [inputs]' package.json",
    "jq --seq --stream --indent 4 . package.json",
    "find . -name '*.rs' -type f",
    "find src -newer Cargo.toml -print",
    "find . -maxdepth 2 \\( -name '*.rs' -o -iname '*.toml' \\) -not -path './target/*' -print0",
    "find . -newermt '2024-01-01' -size +1k -printf '%p %s\\n'",
    "find -H . -mindepth 1 -empty -prune -o -ls",
    "find -E . -regex '.*\\.(rs|toml)'",
    "echo a.txt b.txt | xargs grep -l foo",
    "printf '%s\\n' src/a.rs notes.txt | xargs wc -l",
    "timeout 5 git status",
    "timeout --kill-after=5 10 ls",
    "nice -n 10 ls",
    "nice -5 cat f",
    "env -u FOO LC_ALL=C sort f",
    "stdbuf -oL grep foo f",
    "command -v ls",
    "time -f %e ls",
    "setsid -w ls",
];

#[test]
fn everyday_scripts_and_wrappers_stay_read_only() {
    let sandbox = sandbox();
    let cases: Vec<(&str, BashVerdict)> = EVERYDAY.iter().map(|c| (*c, ReadOnly)).collect();
    assert_eq!(mismatches(&sandbox, &cases), Vec::<String>::new());
}

/// sed: files read and written from the script, commands run, scripts from files, options
/// by prefix.
const SED_ATTACKS: &[(&str, BashVerdict)] = &[
    ("sed -n '$R /etc/shadow' f", NeedsApproval),
    ("sed 's/x/y/;1e touch pwned' f", Unanalysable),
    (
        "sed -e 's/a/b/' -e '2 w .git/hooks/pre-commit' f",
        NeedsApproval,
    ),
    ("sed --expr='s/.*/id/e' f", Unanalysable),
    ("sed 's|[|]|x|w /tmp/out' f", NeedsApproval),
    ("sed -f script.sed f", NeedsApproval),
    ("sed --in-pl=.bak 's/a/b/' f", NeedsApproval),
    ("sed -s -n 'y/a/b/;/x/I W log.txt' f", NeedsApproval),
    ("S='1e id'; sed \"$S\" f", Unanalysable),
    ("sed -z --debug -e '0,/x/{e date' -e '}' f", Unanalysable),
    ("sed -e 'a\\' -e 'text' -e 'w out' f", NeedsApproval),
    (
        "sed -n -e '/[/]/{;W ../outside.txt' -e '}' f",
        NeedsApproval,
    ),
    ("sed '1!G;h;$!d;k' f", Unanalysable),
    ("sed --sandboxed 's/a/b/' f", NeedsApproval),
];

/// awk (gawk, mawk): commands run, files written and read, code loaded, input files named at
/// run time.
const AWK_ATTACKS: &[(&str, BashVerdict)] = &[
    ("awk 'BEGIN { system(\"touch pwned\") }'", Unanalysable),
    ("awk '{ print $0 | \"sh\" }' f", Unanalysable),
    (
        "awk 'BEGIN { while ((\"cat /etc/shadow\" | getline l) > 0) print l }'",
        Unanalysable,
    ),
    (
        "awk '{ print > \".git/hooks/post-checkout\" }' f",
        NeedsApproval,
    ),
    (
        "awk 'BEGIN { getline l < \"/etc/shadow\"; print l }'",
        NeedsApproval,
    ),
    ("awk -f prog.awk f", NeedsApproval),
    (
        "awk 'BEGIN { ARGV[1] = \"/etc/shadow\"; ARGC = 2 } { print }'",
        Unanalysable,
    ),
    ("gawk '@load \"filefuncs\"; BEGIN { }'", Unanalysable),
    (
        "gawk 'BEGIN { f = \"sys\" \"tem\"; @f(\"id\") }'",
        Unanalysable,
    ),
    ("awk '{ printf \"%s\", $0 > $1 }' f", Unanalysable),
    ("gawk --dump-v=/tmp/vars 'BEGIN { }'", NeedsApproval),
    ("gawk -o 'BEGIN { }'", NeedsApproval),
    ("mawk -W exec prog.awk f", NeedsApproval),
    ("gawk -i inc.awk 'BEGIN { }'", NeedsApproval),
    ("P='BEGIN { system(\"id\") }'; awk \"$P\"", Unanalysable),
    ("awk '{ print |& \"cat\" }' f", Unanalysable),
    ("awk 'BEGIN { spawn(\"x\") }'", NeedsApproval),
    (
        "gawk '{ if (NF) /\"/ ; system(\"id\") ; x = /\"/ }' f",
        Unanalysable,
    ),
    (
        "mawk '{ n++ /\"/ ; system(\"id\") ; /\"/ }' f",
        Unanalysable,
    ),
];

/// jq: modules and filters from files, files read through options.
const JQ_ATTACKS: &[(&str, BashVerdict)] = &[
    ("jq -L . 'import \"evil\" as e; e::x' f", Unanalysable),
    ("jq --rawfile k /etc/shadow -n '$k'", NeedsApproval),
    ("jq -n 'include \"m\"; .'", Unanalysable),
    ("jq -f filter.jq package.json", NeedsApproval),
    ("jq --slurpfile s ../../home/.bashrc -n '$s'", NeedsApproval),
    ("jq --library-path /tmp -n '.'", NeedsApproval),
    ("jq -n '\"x\" | modulemeta'", Unanalysable),
    ("jq --raw-out . package.json", NeedsApproval),
    (
        "Q='import \"x\" as $x; .'; jq \"$Q\" package.json",
        Unanalysable,
    ),
];

/// find: files written, read and run, start paths from a file, unknown primaries.
const FIND_ATTACKS: &[(&str, BashVerdict)] = &[
    ("find . -name '*.rs' -fprint0 /tmp/list", Destructive),
    ("find src -newerma /etc/shadow", NeedsApproval),
    ("find . -files0-from list.txt -name x", Unanalysable),
    ("find . -type f -execdir sh -c 'touch x' \\;", Destructive),
    ("find . -name x -fls .git/config", Destructive),
    ("find . -anewer ../../home/.bash_history", NeedsApproval),
    ("find . -name x -delet", NeedsApproval),
    ("find . -samefile /etc/passwd", NeedsApproval),
    ("find . -exec echo + -delete \\;", NeedsApproval),
    ("find . $ACTION", Unanalysable),
];

/// xargs and wrappers: the wrapped command found where the wrapper finds it.
const WRAPPER_ATTACKS: &[(&str, BashVerdict)] = &[
    ("timeout --sig=TERM 9 rm -rf ~", Destructive),
    ("nice --adj 5 rm -rf ~", Destructive),
    ("stdbuf --out L rm -rf /", Destructive),
    ("env --chdir=/ rm -rf etc", Destructive),
    ("xargs --arg-file=/etc/passwd echo", NeedsApproval),
    ("xargs -a ../../home/.ssh/id_rsa echo", NeedsApproval),
    ("xargs -I{} sh -c 'rm {}'", Destructive),
    ("xargs --process-slot-var=LD_PRELOAD ls", Unanalysable),
    ("echo .git/hooks/pre-commit | xargs tee", NeedsApproval),
    ("watch -q 1 rm -rf ~", Destructive),
    ("flock /tmp/lock -c 'rm -rf ~'", Destructive),
    ("chrt -o 0 rm -rf ~", Destructive),
    ("taskset 0x1 rm -rf ~", Destructive),
    ("ionice -c3 -t rm -rf ~", Destructive),
    ("time -o .git/config ls", NeedsApproval),
    ("sudo -D / rm -rf etc", Destructive),
    ("timeout --frobnicate 5 ls", NeedsApproval),
    ("echo '*' | xargs cat", Unanalysable),
];

#[test]
fn sed_scripts_that_read_write_or_run_are_not_read_only() {
    assert_eq!(mismatches(&sandbox(), SED_ATTACKS), Vec::<String>::new());
}

#[test]
fn awk_programs_that_run_write_or_load_are_not_read_only() {
    assert_eq!(mismatches(&sandbox(), AWK_ATTACKS), Vec::<String>::new());
}

#[test]
fn jq_modules_and_files_are_not_read_only() {
    assert_eq!(mismatches(&sandbox(), JQ_ATTACKS), Vec::<String>::new());
}

#[test]
fn find_expressions_are_read_by_their_full_list() {
    assert_eq!(mismatches(&sandbox(), FIND_ATTACKS), Vec::<String>::new());
}

#[test]
fn wrappers_and_xargs_find_the_command_where_it_runs() {
    assert_eq!(
        mismatches(&sandbox(), WRAPPER_ATTACKS),
        Vec::<String>::new()
    );
}

#[test]
fn every_class_has_at_least_five_attacks() {
    for (class, attacks) in [
        ("sed", SED_ATTACKS),
        ("awk", AWK_ATTACKS),
        ("jq", JQ_ATTACKS),
        ("find", FIND_ATTACKS),
        ("wrappers", WRAPPER_ATTACKS),
    ] {
        assert!(attacks.len() >= 5, "{class}");
        assert!(attacks.iter().all(|(_, verdict)| *verdict != ReadOnly));
    }
}

#[test]
fn code_from_a_file_is_a_program_option_no_rule_for_the_command_lifts() {
    let sandbox = sandbox();
    let cases = [
        ("sed -f s.sed f", "sed", "-f"),
        ("sed --fil=s.sed f", "sed", "--fil"),
        ("awk -f p.awk f", "awk", "-f"),
        ("gawk --exec p.awk f", "gawk", "--exec"),
        ("gawk -l filefuncs 'BEGIN {}'", "gawk", "-l"),
        ("jq -f p.jq package.json", "jq", "-f"),
        ("jq -L lib -n .", "jq", "-L"),
    ];
    for (command, program, written) in cases {
        let analysis = sandbox.analyze(command);
        let options: Vec<(String, String)> = analysis
            .program_options
            .iter()
            .map(|option| (option.command.clone(), option.written.clone()))
            .collect();
        assert_eq!(
            options,
            vec![(program.to_owned(), written.to_owned())],
            "{command}"
        );
        assert_ne!(analysis.verdict, ReadOnly, "{command}");
    }
}

#[test]
fn files_in_scripts_are_judged_as_reads_and_writes() {
    let sandbox = sandbox();
    let ws = &sandbox.workspace;
    let analysis = sandbox.analyze("sed -n -e '1r notes.txt' -e 's/a/b/w out.txt' f");
    assert_eq!(analysis.written_paths, vec![ws.join("out.txt")]);
    assert!(analysis.read_paths.contains(&ws.join("notes.txt")));
    let analysis = sandbox.analyze("awk '{ print > \".claude/settings.json\" }' f");
    assert_eq!(
        analysis.written_paths,
        vec![ws.join(".claude/settings.json")]
    );
    // `w -` is a file named `-`, not standard output.
    let analysis = sandbox.analyze("sed 'w -' f");
    assert_eq!(analysis.written_paths, vec![ws.join("-")]);
    let analysis = sandbox.analyze("find . -fprint listing.txt");
    assert_eq!(analysis.written_paths, vec![ws.join("listing.txt")]);
    let analysis = sandbox.analyze("gawk -d 'BEGIN {}'");
    assert_eq!(analysis.written_paths, vec![ws.join("awkvars.out")]);
}

/// Runs `command` with `sh` in the workspace, with the sandbox's home.
fn run(sandbox: &Sandbox, command: &str) -> String {
    let output = Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(&sandbox.workspace)
        .env("HOME", &sandbox.home)
        .output()
        .expect("run sh");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// (command, the file it creates in the workspace): each is refused by the analysis, and
/// running it for real creates the file, which shows the refusal was about a real effect.
fn refused_and_did(sandbox: &Sandbox, cases: &[(&str, &str)]) {
    for (command, creates) in cases {
        let verdict = sandbox.analyze(command).verdict;
        assert_ne!(verdict, ReadOnly, "{command}");
        let target = sandbox.workspace.join(creates);
        assert!(!target.exists(), "{command}: {creates} exists before");
        run(sandbox, command);
        assert!(target.exists(), "{command} did not create {creates}");
    }
}

#[test]
fn the_refused_scripts_do_write_and_run_when_run() {
    let sandbox = sandbox();
    fs::write(sandbox.workspace.join("s.sed"), "1e touch by-sed-file\n").unwrap();
    fs::write(
        sandbox.workspace.join("p.awk"),
        "BEGIN { system(\"touch by-awk-file\") }\n",
    )
    .unwrap();
    refused_and_did(
        &sandbox,
        &[
            ("sed -n 's/a/b/w by-sed-w' f", "by-sed-w"),
            (
                "sed -e 'a\\' -e 'text' -e 'w by-sed-joined' f",
                "by-sed-joined",
            ),
            ("sed 's/x/y/;1e touch by-sed-e' f", "by-sed-e"),
            ("sed -n '1s/.*/touch by-sed-s-e/e' f", "by-sed-s-e"),
            ("sed 's|[|]|x|w by-sed-bracket' f", "by-sed-bracket"),
            ("sed -f s.sed f", "by-sed-file"),
            ("sed --in-pl=.orig 's/a/b/' f", "f.orig"),
            (
                "awk 'BEGIN { system(\"touch by-awk-system\") }'",
                "by-awk-system",
            ),
            ("awk '{ print | \"cat > by-awk-pipe\" }' f", "by-awk-pipe"),
            ("awk '{ print > \"by-awk-print\" }' f", "by-awk-print"),
            ("awk -f p.awk", "by-awk-file"),
            (
                "awk '{ x = $ /\"/ ; system(\"touch by-awk-field\") ; y = $ /\"/ }' f",
                "by-awk-field",
            ),
            ("find . -name f -fprint0 by-find-fprint0", "by-find-fprint0"),
            ("find . -name f -fls by-find-fls", "by-find-fls"),
            (
                "find . -name f -execdir touch by-find-execdir \\;",
                "by-find-execdir",
            ),
            ("timeout --kill-a 5 10 touch by-timeout", "by-timeout"),
            ("nice --adj 5 touch by-nice", "by-nice"),
            ("stdbuf --out L touch by-stdbuf", "by-stdbuf"),
            ("echo by-xargs-tee | xargs tee", "by-xargs-tee"),
            ("flock by-flock true", "by-flock"),
        ],
    );
}

#[test]
fn the_refused_reads_do_read_when_run() {
    let sandbox = sandbox();
    let secret = sandbox.home.join("secret");
    fs::write(&secret, "the secret\n").unwrap();
    fs::write(sandbox.workspace.join("list"), secret.display().to_string()).unwrap();
    let cases = [
        format!("sed -n '1r {}' f", secret.display()),
        format!(
            "awk 'BEGIN {{ getline l < \"{}\"; print l }}'",
            secret.display()
        ),
        format!("jq -n --rawfile k {} '$k'", secret.display()),
        format!("xargs -a {} echo", sandbox.home.join("secret").display()),
        "xargs -a list cat".to_owned(),
    ];
    for command in &cases {
        let analysis = sandbox.analyze(command);
        assert_ne!(analysis.verdict, ReadOnly, "{command}");
        assert!(run(&sandbox, command).contains("the secret"), "{command}");
    }
}

/// Whatever the analysis lets through as read-only, GNU sed's own `--sandbox` (which refuses
/// `e`, `r` and `w` when it parses the script) accepts: the parser never misses a command
/// that GNU sed sees.
#[test]
fn scripts_read_only_to_cairn_have_no_e_r_or_w_for_gnu_sed() {
    let sandbox = sandbox();
    let scripts = [
        "s/a/b/g",
        "s/[/]/x/;p",
        "s/[^/]*$//",
        "s/[[:alpha:]/]/x/w out",
        "\\,[,],p",
        "1i text; w out",
        "a\\\ntext\\\nw out",
        ":a;N;$!ba;s/\\n/ /g",
        "y/a/b/;w out",
        "s/a/b/ gw out",
        "s/a/b/;#e id\np",
        "/x/{p;}",
        "$!{p}",
        "2,+3!d",
        "0,/a/Is//x/M",
        "s/a/\\\n/",
        "1~3{;;;}",
        "b x;:x",
        "l 3",
        "Q 2",
    ];
    for script in scripts {
        let quoted = script.replace('\'', "'\\''");
        let command = format!("sed -n '{quoted}' f");
        if sandbox.analyze(&command).verdict != ReadOnly {
            continue;
        }
        let status = Command::new("sed")
            .args(["--sandbox", "-n", "-e", script, "f"])
            .current_dir(&sandbox.workspace)
            .output()
            .expect("run sed");
        let stderr = String::from_utf8_lossy(&status.stderr);
        assert!(
            !stderr.contains("disabled in sandbox mode"),
            "{script:?} is read-only to cairn, but GNU sed sees e, r or w in it: {stderr}"
        );
    }
    assert!(!Path::new(&sandbox.workspace.join("out")).exists());
}

/// gawk's own extensions, run for real: indirect calls reach `system`, `-d` and `-o` write
/// their default files.
#[cfg(feature = "interop")]
#[test]
fn gawk_extensions_refused_do_run_and_write() {
    let sandbox = sandbox();
    refused_and_did(
        &sandbox,
        &[
            (
                "gawk 'BEGIN { f = \"sys\" \"tem\"; @f(\"touch by-gawk-indirect\") }'",
                "by-gawk-indirect",
            ),
            ("gawk -d 'BEGIN { x = 1 }'", "awkvars.out"),
            // gawk reads a `/` after a condition as a regular expression, mawk as a division.
            (
                "gawk '{ if (1) /\"/ ; system(\"touch by-gawk-condition\") ; x = /\"/ }' f",
                "by-gawk-condition",
            ),
            ("gawk --pretty=by-gawk-pretty 'BEGIN { }'", "by-gawk-pretty"),
            ("gawk --dump-v=by-gawk-dump 'BEGIN { }'", "by-gawk-dump"),
            (
                "gawk 'BEGIN { print \"x\" |& \"cat > by-gawk-coprocess\"; close(\"cat > by-gawk-coprocess\") }'",
                "by-gawk-coprocess",
            ),
        ],
    );
}

/// Programs that hide `system("touch M")` behind a `/` read one way or the other, escapes,
/// comments and continuations: whatever the analysis calls read-only must not create `M`
/// when `awk` (mawk here, or gawk) runs it.
const AWK_DISGUISES: &[&str] = &[
    "{ x = $ /\"/ ; system(\"touch M\") ; y = $ /\"/ }",
    "{ if (1) /\"/ ; system(\"touch M\") ; x = /\"/ }",
    "{ x++ /\"/ ; system(\"touch M\") ; /\"/ }",
    "{ x = 1; x-- /\"/ ; system(\"touch M\") ; /\"/ }",
    "{ print length /\"/ ; system(\"touch M\") ; /\"/ }",
    "{ x = 1 /\"/ ; system(\"touch M\") ; y = 2 /\"/ }",
    "{ a = \"\\\"\" ; system(\"touch M\") }",
    "{ a = \"\\\\\" ; system(\"touch M\") ; b = \"\\\\\" }",
    "# comment \"\n{ system(\"touch M\") }",
    "{ print \"x\" } # '\nBEGIN { system(\"touch M\") }",
    "{ x = \"/\" ; y = /\"/ ; system(\"touch M\") ; z = /\"/ }",
    "{ getline x < \"f\" ; system (\"touch M\") }",
    "{ print > \"/dev/stdout\" ; print | \"touch M\" }",
    "function system2(x) { } { system2(\"x\"); system(\"touch M\") }",
    "{ x = a[1]/\"/ ; system(\"touch M\") ; /\"/ }",
    "BEGIN { while (0) /\"/ ; system(\"touch M\") ; /\"/ }",
    "BEGIN { for (;;) { break } /\"/ ; system(\"touch M\") ; /\"/ }",
    "BEGIN\n{ system(\"touch M\") }",
    "BEGIN { x = \"a\\\n\"; system(\"touch M\") }",
    "BEGIN { x = / \\// ; system(\"touch M\") ; y = / \\// }",
    "BEGIN { x = /[\\/]/ ; system(\"touch M\") }",
    "BEGIN { x = (1) /\"/ ; system(\"touch M\") ; y = (2) /\"/ }",
    "BEGIN { n = split(\"a\", parts, /\"/) ; system(\"touch M\") }",
    "{ print $1, $2 > \"/dev/stderr\" } END { \"touch M\" | getline }",
];

fn awk_disguises_hold(program_name: &str) {
    let sandbox = sandbox();
    let marker = sandbox.workspace.join("M");
    for program in AWK_DISGUISES {
        let quoted = program.replace('\'', "'\\''");
        let command = format!("{program_name} '{quoted}' f");
        let verdict = sandbox.analyze(&command).verdict;
        let _ = fs::remove_file(&marker);
        run(&sandbox, &command);
        assert!(
            verdict != ReadOnly || !marker.exists(),
            "{command}: read-only to cairn, but it ran `touch M`"
        );
    }
}

#[test]
fn awk_programs_read_only_to_cairn_run_nothing_under_awk() {
    awk_disguises_hold("awk");
}

#[cfg(feature = "interop")]
#[test]
fn awk_programs_read_only_to_cairn_run_nothing_under_gawk() {
    awk_disguises_hold("gawk");
}

/// (wrapper command, the command it runs, the file that command creates): the analysis lists
/// the wrapped command exactly where the wrapper finds it, and running the line for real
/// runs that command.
const WRAPPED: &[(&str, &str, &str)] = &[
    (
        "timeout --kill-a 5 10 touch by-w-timeout",
        "touch by-w-timeout",
        "by-w-timeout",
    ),
    (
        "timeout -s KILL 9 touch by-w-signal",
        "touch by-w-signal",
        "by-w-signal",
    ),
    (
        "nice --adj 5 touch by-w-nice",
        "touch by-w-nice",
        "by-w-nice",
    ),
    (
        "nice -7 touch by-w-nice-num",
        "touch by-w-nice-num",
        "by-w-nice-num",
    ),
    (
        "stdbuf --out L -e0 touch by-w-stdbuf",
        "touch by-w-stdbuf",
        "by-w-stdbuf",
    ),
    (
        "env --chdir=src -u X touch by-w-env",
        "touch by-w-env",
        "src/by-w-env",
    ),
    (
        "env - PATH_X=1 touch by-w-env-dash",
        "touch by-w-env-dash",
        "by-w-env-dash",
    ),
    ("chrt -o 0 touch by-w-chrt", "touch by-w-chrt", "by-w-chrt"),
    (
        "ionice -c3 -t touch by-w-ionice",
        "touch by-w-ionice",
        "by-w-ionice",
    ),
    (
        "setsid -w touch by-w-setsid",
        "touch by-w-setsid",
        "by-w-setsid",
    ),
    (
        "flock lock-file -c 'touch by-w-flock'",
        "touch by-w-flock",
        "by-w-flock",
    ),
    (
        "flock -w 5 lock-file touch by-w-flock-argv",
        "touch by-w-flock-argv",
        "by-w-flock-argv",
    ),
    (
        "time -o time.txt -f %e touch by-w-time",
        "touch by-w-time",
        "by-w-time",
    ),
    (
        "command -p touch by-w-command",
        "touch by-w-command",
        "by-w-command",
    ),
    ("nohup touch by-w-nohup", "touch by-w-nohup", "by-w-nohup"),
    (
        "echo by-w-xargs | xargs -n 1 -P 2 --max-chars=999 touch",
        "touch by-w-xargs",
        "by-w-xargs",
    ),
];

#[test]
fn wrappers_run_the_command_the_analysis_found() {
    let sandbox = sandbox();
    for (command, inner, creates) in WRAPPED {
        let analysis = sandbox.analyze(command);
        let texts: Vec<&str> = analysis.commands.iter().map(|c| c.text.as_str()).collect();
        assert!(texts.contains(inner), "{command}: {texts:?}");
        assert_ne!(analysis.verdict, ReadOnly, "{command}");
        run(&sandbox, command);
        assert!(
            sandbox.workspace.join(creates).exists(),
            "{command} did not run `{inner}`"
        );
    }
}
