#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

//! Issue 21, point 2: script languages are parsed or not trusted. sed scripts, awk programs,
//! jq filters, find expressions, xargs and the wrappers are read-only only when every
//! command, function, primary and option in them is on an allowlist; the files they name are
//! judged as reads or writes; code read from a file is a program option no rule for the
//! command alone lifts. (`bash_scripts_run.rs` runs the attacks for real.)

mod bash_support;

use std::fs;

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
    ("echo {/etc/shadow,x} | xargs cat", Unanalysable),
    (
        "printf '%s\\n' a.txt ../../home/.netrc | xargs cat",
        NeedsApproval,
    ),
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
