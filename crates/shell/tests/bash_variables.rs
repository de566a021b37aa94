#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

//! Variables and expansions that change what a command runs or reads: `${X:=v}`, `set -a`,
//! the variables that name configuration (HOME, XDG_*, GIT_CONFIG_GLOBAL, …) set by any
//! form, the allowlist of variables a command may be given, and paths through the running
//! process's own links (`/proc/self/cwd`, `/dev/fd/5/..`).

mod bash_support;

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::Command;

use bash_support::Sandbox;
use cairn_shell::BashVerdict::{self, NeedsApproval, ReadOnly, Unanalysable};
use pretty_assertions::assert_eq;

/// Each command with the verdict it gets when it differs from the one expected.
fn mismatches(sandbox: &Sandbox, table: &[(&str, BashVerdict)]) -> Vec<String> {
    table
        .iter()
        .filter_map(|(command, expected)| {
            let analysis = sandbox.analyze(command);
            (analysis.verdict != *expected).then(|| {
                format!(
                    "{command:?}: expected {expected:?}, got {:?} ({:?})",
                    analysis.verdict, analysis.reasons
                )
            })
        })
        .collect()
}

fn assert_table(table: &[(&str, BashVerdict)]) {
    let sandbox = Sandbox::new();
    assert_eq!(mismatches(&sandbox, table), Vec::<String>::new());
}

/// `${X:=v}` and `${X=v}` assign X, wherever the expansion is.
#[test]
fn assigning_expansions_are_assignments() {
    assert_table(&[
        (": ${PATH:=/tmp/evil}; ls", Unanalysable),
        (
            "echo \"${XDG_CONFIG_HOME:=$PWD/cfg}\"; git log -1",
            Unanalysable,
        ),
        (
            "cat \"x${GIT_DIR=../other/.git}\"; git status",
            Unanalysable,
        ),
        ("echo $(( ${IFS:=0} + 1 ))", Unanalysable),
        (": ${a:=${BASH_ENV:=./env.sh}}", Unanalysable),
        ("echo ${LESSOPEN=|./x.sh}", Unanalysable),
        ("x=HOME; : ${!x:=/tmp}; git status", Unanalysable),
        ("ls ${HOME[0]:=/srv}", Unanalysable),
        ("cat <<EOF\n${HOME:=/srv}\nEOF\ngit l", Unanalysable),
        ("y=${XDG_CONFIG_HOME=/srv}; git l", Unanalysable),
        ("cat < \"${GIT_CONFIG_GLOBAL:=/srv/c}\"", Unanalysable),
        ("[[ -n ${INPUTRC:=/srv/i} ]]", Unanalysable),
        ("case x in ${ZDOTDIR:=/srv}) ;; esac", Unanalysable),
        (
            "echo \"$(echo ${RIPGREP_CONFIG_PATH:=./rc})\"; rg x",
            Unanalysable,
        ),
        // The literal table: what `${c:=rm}` assigns is what `$c` runs.
        (": ${c:=rm}; $c -rf ~", BashVerdict::Destructive),
        ("echo ${name:=world}", ReadOnly),
        ("echo \"${n:-5}\"", ReadOnly),
    ]);
}

/// After `set -a` every assignment is exported, so it is judged like `export`.
#[test]
fn allexport_exports_every_assignment() {
    assert_table(&[
        ("set -a; GIT_DIR=/tmp/x; git status", Unanalysable),
        ("set -a; core=1; git log -1", NeedsApproval),
        ("set -o allexport; opts=--pre=./x; rg foo", NeedsApproval),
        ("set -ao pipefail; v=1; ls", NeedsApproval),
        ("set -euxa; v=1; ls", NeedsApproval),
        ("shopt -so allexport; v=1; ls", NeedsApproval),
        ("bash -a -c 'v=1; ls'", NeedsApproval),
        ("bash -o allexport -c 'v=1; ls'", NeedsApproval),
        ("sh -ac 'v=1; ls'", NeedsApproval),
        // Set after the assignment, in a loop: the next round exports it.
        ("for i in 1 2; do v=$i; set -a; done; ls", NeedsApproval),
        ("v=1; export v; ls", NeedsApproval),
        ("export v; v=2; ls", NeedsApproval),
        ("set -a; LC_ALL=C; sort f", ReadOnly),
        ("set -e; v=1; echo $v", ReadOnly),
    ]);
}

/// The variables that say where programs find their configuration, set by every form Bash
/// has.
#[test]
fn configuration_variables_are_unanalysable_by_any_form() {
    let variables = [
        "HOME",
        "XDG_CONFIG_HOME",
        "XDG_DATA_DIRS",
        "GIT_CONFIG_GLOBAL",
        "GIT_CONFIG_SYSTEM",
        "GIT_CONFIG_NOSYSTEM",
        "BASH_ENV",
        "ENV",
        "ZDOTDIR",
        "INPUTRC",
        "RIPGREP_CONFIG_PATH",
        "LESSKEYIN",
        "WGETRC",
        "CURL_HOME",
        "PYTHONSTARTUP",
        "PWD",
        "GNUPGHOME",
        "TAR_OPTIONS",
        "POSIXLY_CORRECT",
    ];
    let forms = [
        "{V}=/tmp/c git status",
        "{V}=/tmp/c; git status",
        "export {V}=/tmp/c; rg x",
        "declare -x {V}=/tmp/c",
        "typeset {V}=/tmp/c",
        "local {V}=/tmp/c",
        "readonly {V}=/tmp/c",
        ": ${{V}:=/tmp/c}",
        "read {V} < f",
        "read -r -a {V} < f",
        "printf -v {V} %s /tmp/c",
        "mapfile {V} < f",
        "readarray -t {V} < f",
        "for {V} in /tmp/c; do git status; done",
        "getopts ab {V}",
        "let {V}=1",
        "(( {V}=1 ))",
        "echo $(( {V}++ ))",
        "[[ 1 -eq {V}=1 ]]",
        "unset {V}; git status",
        "unset -v {V}",
        "env {V}=/tmp/c git status",
        "env -u {V} git status",
        "exec {{V}}<.",
        "{V}[0]=/tmp/c git status",
        "v='{V}=2'; : $((v))",
        "n={V}; : $((n=1)); : $(($n=3))",
    ];
    let sandbox = Sandbox::new();
    let mut wrong = Vec::new();
    for variable in variables {
        for form in forms {
            let command = form.replace("{V}", variable);
            let analysis = sandbox.analyze(&command);
            if analysis.verdict != Unanalysable {
                wrong.push(format!(
                    "{command:?}: {:?} ({:?})",
                    analysis.verdict, analysis.reasons
                ));
            }
        }
    }
    assert_eq!(wrong, Vec::<String>::new());
}

/// The forms that assign without looking like `NAME=value`, found attacking the analysis.
#[test]
fn assignments_in_disguise_are_assignments() {
    assert_table(&[
        ("export HO''ME=/srv; git l", Unanalysable),
        ("declare \"XDG_CONFIG_HOME=/srv\"", Unanalysable),
        ("builtin export GIT_CONFIG_GLOBAL=/srv/c", Unanalysable),
        ("command declare -x HOME=/srv", Unanalysable),
        ("coproc HOME { cat; }", Unanalysable),
        ("time HOME=/srv git l", Unanalysable),
        ("time -p GIT_DIR=/srv git status", Unanalysable),
        ("declare -a HOME", Unanalysable),
        ("declare -l XDG_DATA_HOME", Unanalysable),
        ("x=HOME; (( $x = 1 ))", Unanalysable),
        ("a[HOME=1]=x", Unanalysable),
        ("echo ${a[XDG_CACHE_HOME=1]}", Unanalysable),
        ("declare -i n; n=HOME=3", Unanalysable),
        ("[[ -v a[HOME=1] ]]", Unanalysable),
        (": $[ZDOTDIR=1]", Unanalysable),
        ("export {HOME,X}=1", Unanalysable),
        ("nice -n 1 env HOME=/srv git l", Unanalysable),
        ("compgen -C 'touch x' w", Unanalysable),
        ("declare -n r=HOME; r=/srv", Unanalysable),
        ("IFS=: ls", Unanalysable),
        ("env 'BASH_FUNC_ls%%=() { id; }' bash -c ls", Unanalysable),
        ("shopt -s expand_aliases; alias ls=id", Unanalysable),
        ("enable -f ./x.so cat", Unanalysable),
        ("POSIXLY_CORRECT=1; ls", Unanalysable),
        ("SHELLOPTS=allexport bash -c 'v=1; ls'", Unanalysable),
        // Still harmless.
        ("IFS= read -r line < f", ReadOnly),
        (
            "while IFS=: read -ra parts; do echo \"${parts[0]}\"; done < f",
            ReadOnly,
        ),
        ("declare -a arr", ReadOnly),
        ("readonly HOME", ReadOnly),
        ("declare -p HOME", ReadOnly),
    ]);
}

/// Only variables known to be harmless may be given to a command; a variable the shell keeps
/// to itself stays read-only unless the environment may already export its name.
#[test]
fn variables_given_to_commands_are_an_allowlist() {
    assert_table(&[
        ("MY_TOOL_CONFIG=./x git status", NeedsApproval),
        ("FZF_DEFAULT_OPTS=--preview=sh ls", NeedsApproval),
        ("TMPDIR=/tmp/x sort f", NeedsApproval),
        ("LESS=-k./keys cat f", NeedsApproval),
        ("export NPM_TOKEN=abc; ls", NeedsApproval),
        ("declare -x opts=1; ls", NeedsApproval),
        ("env TERMINFO=./t ls", NeedsApproval),
        ("DEBUG=1 ls", NeedsApproval),
        ("LANGUAGE=../x ls", NeedsApproval),
        // The locale and time zone name files when their value is a path.
        ("LC_ALL=/work/locale sort f", NeedsApproval),
        ("TZ=:./zone date", NeedsApproval),
        ("export LANG=$PWD/l; sort f", NeedsApproval),
        ("LANG=./l; sort f", NeedsApproval),
        ("env LC_CTYPE=/tmp/l sort f", NeedsApproval),
        ("TERM=../t less f", NeedsApproval),
        // An upper-case name may already be exported by the environment cairn started in.
        ("TMPDIR=/tmp/x; sort f", NeedsApproval),
        ("for F in *.rs; do wc -l \"$F\"; done", NeedsApproval),
        ("https_proxy=http://x:1; ls", NeedsApproval),
        // The harmless ones, and everyday shell variables.
        ("LC_ALL=C sort f", ReadOnly),
        ("LANG=C.UTF-8 LC_COLLATE=C ls", ReadOnly),
        ("TZ=UTC date", ReadOnly),
        ("NO_COLOR=1 ls", ReadOnly),
        ("CLICOLOR_FORCE=1 COLUMNS=120 ls", ReadOnly),
        ("TERM=dumb git log -1", ReadOnly),
        ("GIT_AUTHOR_NAME=me git log -1", ReadOnly),
        ("RUST_BACKTRACE=1 RUST_LOG=debug ls", ReadOnly),
        ("CI=true ls", ReadOnly),
        ("env LC_ALL=C sort f", ReadOnly),
        ("export LC_ALL=C; sort f", ReadOnly),
        ("x=3; echo $x", ReadOnly),
        ("for f in *.rs; do wc -l \"$f\"; done", ReadOnly),
        ("n=0; n=$((n+1)); echo $n", ReadOnly),
        ("while read -r line; do echo \"$line\"; done < f", ReadOnly),
        ("export PATH; ls", ReadOnly),
        ("unset tmp; ls", ReadOnly),
        ("cat /dev/null", ReadOnly),
        ("(( i = 2 * 3 )); echo $i", ReadOnly),
    ]);
}

/// Paths through the running process's own links name what the shell has at run time, not
/// what cairn has now.
#[test]
fn process_links_are_not_known_until_run_time() {
    assert_table(&[
        ("exec 5<.; cd /; cat /proc/self/fd/5/secret", Unanalysable),
        ("exec 6< src; cat /dev/fd/6/../x", Unanalysable),
        ("exec {d}<.; cat /proc/$$/fd/$d/x", Unanalysable),
        ("cat /proc/thread-self/fd/3/../../etc/passwd", Unanalysable),
        ("cd ~/.ssh; cat /proc/self/cwd/id_rsa", Unanalysable),
        ("cat /proc/self/root/etc/shadow", Unanalysable),
        ("cat /proc/1/cwd/x", Unanalysable),
        ("cat /proc/self/task/1/cwd/x", Unanalysable),
        ("ls /proc/self/map_files/", NeedsApproval),
        ("cat /proc/self/map_files/400000-401000", Unanalysable),
        ("cat /dev/stdin/../x", Unanalysable),
        ("echo hi > /proc/self/cwd/notes", Unanalysable),
        ("echo hi > /dev/fd/7", Unanalysable),
        ("cd /proc/self/cwd && cat x", Unanalysable),
        // The standard streams and devices stay harmless.
        ("echo hi > /dev/stdout", ReadOnly),
        ("echo hi >/dev/fd/2", ReadOnly),
        ("cat /dev/stdin", ReadOnly),
        ("echo x | cat /dev/fd/0", ReadOnly),
        ("diff <(ls a) <(ls b)", ReadOnly),
    ]);
}

/// A link in the workspace that leads to `/proc/self/cwd` leads wherever the shell is.
#[test]
fn a_workspace_link_to_a_process_link_is_not_followed_with_cairns_view() {
    let sandbox = Sandbox::new();
    symlink("/proc/self/cwd", sandbox.workspace.join("here")).unwrap();
    symlink("here", sandbox.workspace.join("there")).unwrap();
    symlink("/dev/fd", sandbox.workspace.join("fds")).unwrap();
    for command in [
        "cd ~ && cat ../work/project/here/.bashrc",
        "cat there/x",
        "cat fds/5/x",
        "echo x > here/y",
        "grep -R token .",
        "cd ~ && grep -R x ../work/project",
    ] {
        let analysis = sandbox.analyze(command);
        assert_eq!(
            analysis.verdict, Unanalysable,
            "{command}: {:?}",
            analysis.reasons
        );
    }
}

fn bash(dir: &Path, script: &str, home: Option<&Path>) -> String {
    let mut command = Command::new("bash");
    command.arg("-c").arg(script).current_dir(dir);
    if let Some(home) = home {
        command.env("HOME", home);
    }
    let output = command.output().expect("run bash");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// A descriptor on the workspace, then `cd /`: the path through `/proc/self/fd` reads a file
/// the analysis could not have placed, as bash shows.
#[test]
fn a_directory_descriptor_reaches_where_the_analysis_cannot_see() {
    if !Path::new("/proc/self/fd").exists() {
        return;
    }
    let sandbox = Sandbox::new();
    fs::write(sandbox.base.join("secret"), "the secret").unwrap();
    let command = "exec 5<.; cd /; cat /proc/self/fd/5/../../secret";
    assert_eq!(sandbox.analyze(command).verdict, Unanalysable);
    assert_eq!(bash(&sandbox.workspace, command, None), "the secret");
}

/// HOME pointed at a planted `.gitconfig`: `git log` runs its pager program, which writes a
/// marker. The analysis refuses each way of pointing HOME there.
#[test]
fn home_pointing_at_a_planted_gitconfig_runs_its_program() {
    let sandbox = Sandbox::new();
    let planted = sandbox.workspace.join("planted");
    fs::create_dir_all(&planted).unwrap();
    let marker = sandbox.base.join("marker");
    fs::write(
        planted.join(".gitconfig"),
        format!(
            "[core]\n\tpager = touch {}\n[pager]\n\tlog = true\n[alias]\n\tl = !touch {}\n",
            marker.display(),
            marker.display()
        ),
    )
    .unwrap();
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(&sandbox.workspace)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .expect("run git")
    };
    git(&["init", "-q"]);
    for command in [
        ": ${HOME:=x}; HOME=$PWD/planted git l",
        "export HOME=$PWD/planted; git l",
        "read HOME <<< $PWD/planted; git l",
        "printf -v HOME %s \"$PWD/planted\"; git l",
        "for HOME in $PWD/planted; do git l; done",
    ] {
        assert_eq!(sandbox.analyze(command).verdict, Unanalysable, "{command}");
        let _ = fs::remove_file(&marker);
        bash(&sandbox.workspace, command, Some(&sandbox.home));
        assert!(marker.exists(), "{command} did not run the planted program");
    }
}

/// A loop variable names each value its loop gives it, globs matched, and a variable
/// assigned once names its value; once the command line assigns it anywhere else, it names a
/// path known only at run time.
#[test]
fn loop_variables_name_the_files_their_loop_gives_them() {
    let sandbox = Sandbox::new();
    fs::write(sandbox.workspace.join("a.rs"), "fn main() {}").unwrap();
    fs::write(sandbox.workspace.join("src/b.rs"), "").unwrap();
    let outside = sandbox.base.join("outside");
    fs::write(&outside, "secret").unwrap();
    let table = [
        ("for f in *.rs; do wc -l \"$f\"; done", ReadOnly),
        ("for f in src/*.rs a.rs; do head -n 3 $f; done", ReadOnly),
        ("for f in *.rs; do cat \"./$f\"; done", ReadOnly),
        ("for f in ../../*; do cat \"$f\"; done", NeedsApproval),
        (
            "for f in a.rs ../../outside; do cat \"$f\"; done",
            NeedsApproval,
        ),
        ("for f in *.rs; do echo x > \"$f.bak\"; done", NeedsApproval),
        (
            "for f in *.rs; do f=/etc/passwd; cat \"$f\"; done",
            Unanalysable,
        ),
        (
            "for f in *.rs; do cat \"$f\"; eval 'f=~/.ssh/id_rsa'; done",
            Unanalysable,
        ),
        (
            "for f in *.rs; do cat \"$f\"; read -r f; done < list",
            Unanalysable,
        ),
        (
            "for f in *.rs; do cat \"$f\"; (( f = 1 )); done",
            Unanalysable,
        ),
        ("for f; do cat \"$f\"; done", Unanalysable),
        ("for f in $(ls); do cat \"$f\"; done", Unanalysable),
        // One literal assignment names its value.
        ("x=a.rs; cat \"$x\"", ReadOnly),
        ("dir=src; ls \"$dir\"; head -n 2 $dir/b.rs", ReadOnly),
        ("x=../../outside; cat \"$x\"", NeedsApproval),
        ("x=a.rs; cat \"$x\"; x=/etc/passwd", Unanalysable),
        ("x='a.rs ../../outside'; cat $x", Unanalysable),
        ("x=a.rs; eval 'x=~/.ssh/id_rsa'; cat \"$x\"", Unanalysable),
        ("x=a.rs; read x; cat \"$x\"", Unanalysable),
    ];
    assert_eq!(mismatches(&sandbox, &table), Vec::<String>::new());
    // A link among the matches is read where it leads.
    symlink(&outside, sandbox.workspace.join("link.rs")).unwrap();
    let analysis = sandbox.analyze("for f in *.rs; do wc -l \"$f\"; done");
    assert_eq!(analysis.verdict, NeedsApproval);
    assert_eq!(analysis.outside_paths, [outside]);
}
