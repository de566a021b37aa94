#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

//! Issue 21, point 2, on disk: the sed scripts, awk programs, find expressions, xargs and
//! wrapper lines the analysis refuses are run for real with the installed GNU sed, awk (mawk
//! or gawk), find and xargs, to show that each did write, run or read what was refused; and
//! disguised scripts the analysis calls read-only are run to show they run nothing. gawk's own
//! extensions and jq, not on every machine, are behind the `interop` feature.

mod bash_support;

use std::fs;
use std::process::Command;

use bash_support::Sandbox;
use cairn_shell::BashVerdict::ReadOnly;

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

/// Runs `command` with `bash` (as cairn does) in the workspace, with the sandbox's home.
fn run(sandbox: &Sandbox, command: &str) -> String {
    let output = Command::new("bash")
        .arg("-c")
        .arg(command)
        .current_dir(&sandbox.workspace)
        .env("HOME", &sandbox.home)
        .output()
        .expect("run bash");
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
    #[cfg_attr(
        not(feature = "interop"),
        allow(unused_mut, reason = "jq is interop's")
    )]
    let mut cases = vec![
        format!("sed -n '1r {}' f", secret.display()),
        format!(
            "awk 'BEGIN {{ getline l < \"{}\"; print l }}'",
            secret.display()
        ),
        format!("xargs -a {} echo", sandbox.home.join("secret").display()),
        "xargs -a list cat".to_owned(),
        format!("echo {{{},f}} | xargs cat", secret.display()),
    ];
    // jq is not on every machine.
    #[cfg(feature = "interop")]
    cases.push(format!("jq -n --rawfile k {} '$k'", secret.display()));
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
        "/a/{p;b}",
        "/a/{:x;w out\n}",
        "/a/{s/a/b/;t}",
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
    assert!(!sandbox.workspace.join("out").exists());
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

/// A small deterministic generator (a linear congruential one): the same scripts every run.
struct Pieces(u64);

impl Pieces {
    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        from[((self.0 >> 33) as usize) % from.len()]
    }

    fn script(&mut self, from: &[&str], parts: usize) -> String {
        (0..parts).map(|_| self.pick(from)).collect()
    }
}

/// Scripts stitched together from the pieces that make sed's parsing tricky; whatever is
/// read-only to cairn GNU sed parses with no `e`, `r` or `w` (its `--sandbox` refuses those).
#[test]
fn stitched_sed_scripts_read_only_to_cairn_have_no_e_r_or_w() {
    const PIECES: &[&str] = &[
        "s/[/]/x/",
        "s,a,b,",
        "w out",
        "e touch M",
        "r /etc/hostname",
        ";",
        "\n",
        "}",
        "{",
        "a\\",
        "a x",
        "\\",
        "/",
        "[",
        "]",
        "#",
        "y/a/b/",
        "1",
        "$",
        "!",
        ",",
        " ",
        "p",
        "s/a/b/w o",
        "b",
        ":l",
        "/x/",
        "\\,x,",
        "[/]",
        "s/x/[/",
        "g",
        "e",
        "w",
        "I",
        "~2",
        "+1",
        "t",
        "\\n",
        "'",
    ];
    let sandbox = sandbox();
    let mut pieces = Pieces(21);
    let mut read_only = 0;
    for _ in 0..400 {
        let parts = 2 + pieces.pick(&["0", "1", "2", "3", "4"]).len() * 2;
        let script = pieces.script(PIECES, parts);
        let quoted = script.replace('\'', "'\\''");
        if sandbox.analyze(&format!("sed -n '{quoted}' f")).verdict != ReadOnly {
            continue;
        }
        read_only += 1;
        let output = Command::new("sed")
            .args(["--sandbox", "-n", "-e", &script, "f"])
            .current_dir(&sandbox.workspace)
            .output()
            .expect("run sed");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            !stderr.contains("disabled in sandbox mode"),
            "{script:?} is read-only to cairn, but GNU sed sees e, r or w in it: {stderr}"
        );
    }
    assert!(
        read_only > 20,
        "only {read_only} stitched scripts were read-only"
    );
}

/// Programs stitched from the pieces that make awk's tokens tricky, each ending in a hidden
/// `system("touch M")`: whatever is read-only to cairn runs nothing under awk.
#[test]
fn stitched_awk_programs_read_only_to_cairn_run_nothing() {
    const PIECES: &[&str] = &[
        "/", "\"", "x", "$", "(", ")", "if (1) ", "++", "1", "]", "a[1]", " ", ";", "\n", "#",
        "\\", "\"/\"", "/\"/", "{", "}", "print ", "getline ", "length ", ",", "!", "~", "[/]",
        "y = ", "'",
    ];
    let sandbox = sandbox();
    let marker = sandbox.workspace.join("M");
    let mut pieces = Pieces(7);
    let mut read_only = 0;
    for _ in 0..300 {
        let parts = 2 + pieces.pick(&["0", "1", "2", "3"]).len() * 2;
        let program = format!(
            "{{ {} system(\"touch M\") {} }}",
            pieces.script(PIECES, parts),
            pieces.script(PIECES, parts)
        );
        let quoted = program.replace('\'', "'\\''");
        let command = format!("awk '{quoted}' f");
        if sandbox.analyze(&command).verdict != ReadOnly {
            continue;
        }
        read_only += 1;
        let _ = fs::remove_file(&marker);
        run(&sandbox, &command);
        assert!(
            !marker.exists(),
            "{command}: read-only to cairn, but it ran `touch M`"
        );
    }
    // Most hide nothing from cairn: system() is seen and refused.
    assert!(read_only < 300);
}

/// Filters stitched from the pieces that hide jq's module system in strings, interpolations,
/// comments, fields and keys: whatever is read-only to cairn makes jq load no module (jq
/// says "module not found" when it tries, there being none). jq is not on every machine.
#[cfg(feature = "interop")]
#[test]
fn stitched_jq_filters_read_only_to_cairn_load_no_module() {
    const PIECES: &[&str] = &[
        "import \"m\" as m; ",
        "include \"m\"; ",
        "\"",
        "\\(",
        ")",
        "(",
        "#",
        "\n",
        ".import",
        "{import: 1}",
        "modulemeta",
        " | ",
        ".",
        " ",
        "$__loc__",
        "\"import\"",
        "\"m\"",
        "include",
        ",",
        "\\",
        "{include: 2}",
        "$ENV",
        "input_filename",
    ];
    let sandbox = sandbox();
    let mut pieces = Pieces(3);
    let mut read_only = 0;
    for _ in 0..300 {
        let parts = 2 + pieces.pick(&["0", "1", "2", "3"]).len() * 2;
        let filter = pieces.script(PIECES, parts);
        let quoted = filter.replace('\'', "'\\''");
        if sandbox.analyze(&format!("jq -n '{quoted}'")).verdict != ReadOnly {
            continue;
        }
        read_only += 1;
        let output = Command::new("jq")
            .args(["-n", &filter])
            .current_dir(&sandbox.workspace)
            .env("HOME", &sandbox.home)
            .output()
            .expect("run jq");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            !stderr.contains("module not found"),
            "{filter:?} is read-only to cairn, but jq loads a module: {stderr}"
        );
    }
    assert!(
        read_only > 20,
        "only {read_only} stitched filters were read-only"
    );
}
