//! `Grep` against ripgrep on the same trees: against its output as checked in under
//! `fixtures/rg/` (made from the real `rg` by `fixtures/rg/regen.sh`), and in the interop
//! suite (`--features interop`) against the installed `rg` itself. Differences are only those
//! documented in `src/search/grep.rs`: content and count output equal `rg --sort path` with
//! `--max-columns 500 --max-columns-preview`, file lists are compared as sets (their order is
//! newest first, tested on its own), and the trailing newline is dropped.

mod search_support;

use std::time::{Duration, SystemTime};

use cairn_tools::{GrepTool, Tool, ToolContext};
use pretty_assertions::assert_eq;
use search_support::{Tree, call, call_ok, rg, set_mtime, sorted_lines};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// rg's flags for what `content` mode prints: files in path order, long lines cut.
const CONTENT: &[&str] = &[
    "--sort",
    "path",
    "--max-columns",
    "500",
    "--max-columns-preview",
];

fn project() -> Tree {
    let long_line = format!("{} TODO {} TODO end\n", "x".repeat(20), "y".repeat(600));
    let mut tree = Tree::new();
    tree.mkdir(".git")
        .write(".gitignore", "target/\n*.log\n")
        .write(
            "src/main.rs",
            "use std::io;\n\nfn main() {\n    let config = load_config();\n    println!(\"Hello\");\n    \
             // TODO: handle errors\n}\n\nfn load_config() -> Config {\n    Config { verbose: false }\n}\n",
        )
        .write(
            "src/lib.rs",
            "pub mod util;\n\npub struct Config {\n    pub verbose: bool,\n}\n\nimpl Config {\n    \
             pub fn new() -> Self {\n        Config { verbose: true }\n    }\n}\n",
        )
        .write("src/util/mod.rs", "pub fn helper() -> u32 {\n    42\n}\n// todo: more helpers\n")
        .write("src/util/strings.rs", "pub fn shout(s: &str) -> String {\n    s.to_uppercase()\n}\n")
        .write("a/x.rs", "fn a_x() {}\n")
        .write("a-b/x.rs", "fn a_b_x() {}\n")
        .write("docs/guide.md", "# Guide\n\nCall `main` to start.\nTODO: write more\n")
        .write(
            "scripts/build.py",
            "def main():\n    print('TODO build')\n\nif __name__ == '__main__':\n    main()\n",
        )
        .write("web/app.js", "function main() { return 1; }\n")
        .write("web/app.ts", "export function main(): number { return 1; }\n")
        .write("target/debug/gen.rs", "fn main() {} // generated TODO\n")
        .write("build.log", "main: TODO\n")
        .write(".hidden/secret.rs", "fn main() {} // hidden TODO\n")
        .write(".env", "TODO=1\n")
        .write("data.bin", b"fn main\x00\x01\x02 binary TODO\n")
        .write("long.txt", long_line);
    tree
}

/// What Grep prints for `input`, next to what `rg ARGS PATTERN ROOT` prints.
async fn both(tree: &Tree, input: Value, rg_args: &[&str]) -> (String, String) {
    let pattern = input["pattern"].as_str().unwrap_or_default().to_string();
    let ours = call_ok(tree.root(), "Grep", input).await;
    let mut args = rg_args.to_vec();
    args.extend(["-e", &pattern, tree.root_str()]);
    let theirs = rg(tree.root(), &args);
    let theirs = if theirs.is_empty() {
        "No matches found".to_string()
    } else {
        theirs
    };
    (ours, theirs)
}

async fn assert_same_as_rg(tree: &Tree, input: Value, rg_args: &[&str]) {
    let (ours, theirs) = both(tree, input, rg_args).await;
    assert_eq!(ours, theirs);
}

#[tokio::test]
async fn content_mode_numbers_lines_by_default_like_rg_n() {
    let tree = project();
    let input = json!({"pattern": r"fn \w+", "output_mode": "content"});
    let (ours, theirs) = both(&tree, input, &[&["-n"], CONTENT].concat()).await;
    assert_eq!(ours, theirs);
    assert!(
        ours.contains(&format!(
            "{}:3:fn main() {{",
            tree.path("src/main.rs").display()
        )),
        "{ours}"
    );
}

#[tokio::test]
async fn content_mode_without_line_numbers_matches_rg() {
    let tree = project();
    let input = json!({"pattern": "TODO", "output_mode": "content", "-n": false});
    assert_same_as_rg(&tree, input, CONTENT).await;
}

#[tokio::test]
async fn context_lines_match_rg_with_separators_between_files() {
    let tree = project();
    let input = json!({"pattern": "Config", "output_mode": "content", "-C": 1});
    let (ours, theirs) = both(&tree, input, &[&["-n", "-C", "1"], CONTENT].concat()).await;
    assert_eq!(ours, theirs);
    assert!(ours.contains("\n--\n"), "{ours}");

    let after = json!({"pattern": "fn main", "output_mode": "content", "-A": 2});
    assert_same_as_rg(&tree, after, &[&["-n", "-A", "2"], CONTENT].concat()).await;
    let before = json!({"pattern": "verbose", "output_mode": "content", "-B": 2, "-n": false});
    assert_same_as_rg(&tree, before, &[&["-B", "2"], CONTENT].concat()).await;
}

#[tokio::test]
async fn files_with_matches_is_the_default_and_lists_what_rg_lists() {
    let tree = project();
    let (ours, theirs) = both(&tree, json!({"pattern": "main"}), &["-l"]).await;
    assert_eq!(sorted_lines(&ours), sorted_lines(&theirs));
    assert!(
        !ours.contains("gen.rs") && !ours.contains("build.log"),
        "gitignored: {ours}"
    );
    assert!(
        !ours.contains("secret.rs") && !ours.contains("data.bin"),
        "hidden, binary: {ours}"
    );
}

#[tokio::test]
async fn files_with_matches_are_newest_first() {
    let mut tree = Tree::new();
    tree.write("old.txt", "needle\n")
        .write("mid.txt", "needle\n")
        .write("new.txt", "needle\n");
    let base = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
    set_mtime(&tree.path("mid.txt"), base + Duration::from_secs(30));
    set_mtime(&tree.path("new.txt"), base + Duration::from_secs(60));
    set_mtime(&tree.path("old.txt"), base);
    let ours = call_ok(tree.root(), "Grep", json!({"pattern": "needle"})).await;
    let expected: Vec<String> = ["new.txt", "mid.txt", "old.txt"]
        .iter()
        .map(|name| tree.path(name).display().to_string())
        .collect();
    assert_eq!(ours, expected.join("\n"));
}

#[tokio::test]
async fn count_mode_matches_rg_count() {
    let tree = project();
    let input = json!({"pattern": "fn", "output_mode": "count"});
    assert_same_as_rg(&tree, input, &["-c", "--sort", "path"]).await;
}

#[tokio::test]
async fn case_insensitive_search_matches_rg_i() {
    let tree = project();
    let input = json!({"pattern": "todo", "output_mode": "content", "-i": true});
    let (ours, theirs) = both(&tree, input, &[&["-n", "-i"], CONTENT].concat()).await;
    assert_eq!(ours, theirs);
    assert!(
        ours.contains("todo: more helpers") && ours.contains("TODO: handle"),
        "{ours}"
    );
    let sensitive = json!({"pattern": "todo", "output_mode": "content"});
    assert_same_as_rg(&tree, sensitive, &[&["-n"], CONTENT].concat()).await;
}

#[tokio::test]
async fn glob_and_type_filters_match_rg() {
    let tree = project();
    let rust_only = json!({"pattern": "main", "output_mode": "content", "glob": "*.rs"});
    assert_same_as_rg(&tree, rust_only, &[&["-n", "-g", "*.rs"], CONTENT].concat()).await;
    let braces = json!({"pattern": "main", "output_mode": "count", "glob": "*.{js,ts}"});
    assert_same_as_rg(&tree, braces, &["-c", "--sort", "path", "-g", "*.{js,ts}"]).await;
    let anchored = json!({"pattern": "fn", "output_mode": "count", "glob": "src/util/*"});
    assert_same_as_rg(
        &tree,
        anchored,
        &["-c", "--sort", "path", "-g", "src/util/*"],
    )
    .await;
    let excluded = json!({"pattern": "fn", "output_mode": "count", "glob": "!src/**"});
    assert_same_as_rg(&tree, excluded, &["-c", "--sort", "path", "-g", "!src/**"]).await;
    let python = json!({"pattern": "main", "output_mode": "content", "type": "py"});
    assert_same_as_rg(&tree, python, &[&["-n", "-t", "py"], CONTENT].concat()).await;
    let rust = json!({"pattern": "Config", "output_mode": "count", "type": "rust"});
    assert_same_as_rg(&tree, rust, &["-c", "--sort", "path", "-t", "rust"]).await;
}

#[tokio::test]
async fn several_globs_are_separate_rg_globs() {
    let tree = project();
    let input = json!({"pattern": "main", "output_mode": "count", "glob": "*.py,*.md *.js"});
    assert_same_as_rg(
        &tree,
        input,
        &[
            "-c", "--sort", "path", "-g", "*.py", "-g", "*.md", "-g", "*.js",
        ],
    )
    .await;
}

#[tokio::test]
async fn multiline_matches_rg_u_multiline_dotall() {
    let tree = project();
    let input =
        json!({"pattern": r"struct Config \{.*?\}", "output_mode": "content", "multiline": true});
    let (ours, theirs) = both(
        &tree,
        input,
        &[&["-n", "-U", "--multiline-dotall"], CONTENT].concat(),
    )
    .await;
    assert_eq!(ours, theirs);
    assert!(ours.contains("lib.rs:4:    pub verbose: bool,"), "{ours}");
    let across =
        json!({"pattern": r"main\(\) \{\n\s+let", "output_mode": "count", "multiline": true});
    assert_same_as_rg(
        &tree,
        across,
        &["-c", "--sort", "path", "-U", "--multiline-dotall"],
    )
    .await;
}

#[tokio::test]
async fn head_limit_keeps_the_first_lines_and_notes_the_rest() {
    let tree = project();
    let input = json!({"pattern": "main", "output_mode": "content", "head_limit": 3});
    let ours = call_ok(tree.root(), "Grep", input).await;
    let mut args = [&["-n"], CONTENT].concat();
    args.extend(["main", tree.root_str()]);
    let theirs = rg(tree.root(), &args);
    let total = theirs.lines().count();
    let first: Vec<&str> = theirs.lines().take(3).collect();
    assert_eq!(
        ours,
        format!(
            "{}\n\n[Showing the first 3 of {total} lines (head_limit). Narrow the search or raise \
             head_limit to see more.]",
            first.join("\n")
        )
    );

    let files = call_ok(
        tree.root(),
        "Grep",
        json!({"pattern": "main", "head_limit": 2}),
    )
    .await;
    let total = rg(tree.root(), &["-l", "main", tree.root_str()])
        .lines()
        .count();
    let note = format!(
        "\n\n[Showing the first 2 of {total} files (head_limit). Narrow the search or raise \
         head_limit to see more.]"
    );
    assert!(files.ends_with(&note), "{files}");
    assert_eq!(
        files.lines().count(),
        4,
        "two paths, a blank line and the note: {files}"
    );
}

#[tokio::test]
async fn gitignore_counts_only_inside_a_git_repository_like_rg() {
    let mut tree = Tree::new();
    tree.write(".gitignore", "skipped.txt\n")
        .write("skipped.txt", "needle\n")
        .write("kept.txt", "needle\n")
        .write(".ignore", "also-skipped.txt\n")
        .write("also-skipped.txt", "needle\n");
    let outside_git = json!({"pattern": "needle", "output_mode": "count"});
    let (ours, theirs) = both(&tree, outside_git.clone(), &["-c", "--sort", "path"]).await;
    assert_eq!(ours, theirs);
    assert!(
        ours.contains("skipped.txt:1") && !ours.contains("also-skipped"),
        "{ours}"
    );

    tree.mkdir(".git");
    let (ours, theirs) = both(&tree, outside_git, &["-c", "--sort", "path"]).await;
    assert_eq!(ours, theirs);
    assert_eq!(ours, format!("{}:1", tree.path("kept.txt").display()));
}

#[tokio::test]
async fn parent_ignore_files_apply_below_the_root_but_a_named_ignored_directory_is_searched() {
    let mut tree = project();
    tree.write("src/build.log", "main\n");
    let src = tree.path("src");
    let below = json!({"pattern": "main", "path": src.to_str().unwrap(), "output_mode": "count"});
    let ours = call_ok(tree.root(), "Grep", below).await;
    assert_eq!(
        ours,
        rg(
            tree.root(),
            &["-c", "--sort", "path", "main", src.to_str().unwrap()]
        )
    );
    assert!(
        !ours.contains("build.log"),
        "the root's *.log rule applies in src/: {ours}"
    );

    // As with rg, naming a directory searches it even when a parent's .gitignore excludes it.
    let target = tree.path("target");
    let named = json!({"pattern": "main", "path": target.to_str().unwrap()});
    let ours = call_ok(tree.root(), "Grep", named).await;
    assert_eq!(
        ours,
        rg(tree.root(), &["-l", "main", target.to_str().unwrap()])
    );
    assert_eq!(ours, tree.path("target/debug/gen.rs").display().to_string());
}

#[tokio::test]
async fn binary_files_found_by_walking_are_skipped_but_named_ones_are_reported() {
    let tree = project();
    let walked = json!({"pattern": "binary", "output_mode": "content"});
    assert_same_as_rg(&tree, walked, &[&["-n"], CONTENT].concat()).await;

    let named = tree.path("data.bin");
    let input =
        json!({"pattern": "binary", "output_mode": "content", "path": named.to_str().unwrap()});
    let ours = call_ok(tree.root(), "Grep", input).await;
    let theirs = rg(tree.root(), &["-n", "binary", named.to_str().unwrap()]);
    assert_eq!(ours, theirs);
    assert!(ours.starts_with("binary file matches"), "{ours}");
}

#[tokio::test]
async fn a_single_file_is_searched_without_file_names_like_rg() {
    let tree = project();
    let file = tree.path("src/main.rs");
    let file = file.to_str().unwrap();
    let content = json!({"pattern": "Config", "output_mode": "content", "path": file});
    let ours = call_ok(tree.root(), "Grep", content).await;
    assert_eq!(ours, rg(tree.root(), &["-n", "Config", file]));
    assert_eq!(
        ours,
        "9:fn load_config() -> Config {\n10:    Config { verbose: false }"
    );
    let count = json!({"pattern": "Config", "output_mode": "count", "path": file});
    assert_eq!(
        call_ok(tree.root(), "Grep", count).await,
        rg(tree.root(), &["-c", "Config", file])
    );
    let files = json!({"pattern": "Config", "path": file});
    assert_eq!(call_ok(tree.root(), "Grep", files).await, file);
}

#[tokio::test]
async fn long_lines_are_cut_like_rg_max_columns_preview() {
    let tree = project();
    let input = json!({"pattern": "TODO", "output_mode": "content", "glob": "*.txt"});
    let (ours, theirs) = both(&tree, input, &[&["-n", "-g", "*.txt"], CONTENT].concat()).await;
    assert_eq!(ours, theirs);
    assert!(ours.ends_with(" [... omitted end of long line]"), "{ours}");
}

#[tokio::test]
async fn relative_paths_resolve_against_the_working_directory() {
    let tree = project();
    let input = json!({"pattern": "helper", "output_mode": "content", "path": "src/util"});
    let ours = call_ok(tree.root(), "Grep", input).await;
    let util = tree.path("src/util");
    assert_eq!(
        ours,
        rg(tree.root(), &["-n", "helper", util.to_str().unwrap()])
    );
    assert!(
        ours.starts_with(&format!("{}/mod.rs:1:", util.display())),
        "{ours}"
    );
}

#[tokio::test]
async fn no_match_invalid_regex_unknown_type_and_missing_path_are_reported() {
    let tree = project();
    let none = call_ok(tree.root(), "Grep", json!({"pattern": "zzz_absent"})).await;
    assert_eq!(none, "No matches found");

    let invalid = call(tree.root(), "Grep", json!({"pattern": "fn (main"})).await;
    assert!(invalid.is_error);
    let text = invalid.content.text();
    assert!(text.starts_with("Invalid regex `fn (main`: "), "{text}");
    assert!(text.contains("unclosed group"), "{text}");

    let unknown = call(
        tree.root(),
        "Grep",
        json!({"pattern": "x", "type": "klingon"}),
    )
    .await;
    assert!(unknown.is_error);
    assert!(
        unknown
            .content
            .text()
            .starts_with("Unknown file type `klingon`"),
        "{unknown:?}"
    );

    let missing = call(
        tree.root(),
        "Grep",
        json!({"pattern": "x", "path": "nowhere"}),
    )
    .await;
    assert!(missing.is_error);
    assert_eq!(
        missing.content.text(),
        format!("Path does not exist: {}", tree.path("nowhere").display())
    );
}

#[tokio::test]
async fn a_cancelled_search_says_so() {
    let tree = project();
    let input = serde_json::from_value(json!({"pattern": "main"})).unwrap();
    let cancel = CancellationToken::new();
    cancel.cancel();
    let ctx = ToolContext::new(tree.root().to_path_buf());
    let output = GrepTool.run(input, &ctx, &cancel).await;
    assert!(output.is_error);
    assert_eq!(
        output.content.text(),
        "Grep was cancelled before it finished."
    );
}

#[tokio::test]
async fn the_call_touches_the_absolute_search_root() {
    let tree = project();
    let ctx = ToolContext::new(tree.root().to_path_buf());
    let input = serde_json::from_value(json!({"pattern": "x", "path": "src/./util/.."})).unwrap();
    assert_eq!(GrepTool.touched_paths(&input, &ctx), vec![tree.path("src")]);
}
