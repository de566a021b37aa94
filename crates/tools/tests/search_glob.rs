//! `Glob` on real temp trees: matching, newest-first order, ignore rules, the cap.

mod search_support;

use std::time::{Duration, SystemTime};

use pretty_assertions::assert_eq;
use search_support::{Tree, call, call_ok, set_mtime};
use serde_json::json;

fn paths(tree: &Tree, relative: &[&str]) -> String {
    relative
        .iter()
        .map(|path| tree.path(path).display().to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn matches_relative_to_the_root_newest_first() {
    let mut tree = Tree::new();
    // Tree::write gives each file a later modification time than the one before.
    tree.write("README.md", "")
        .write("src/lib.rs", "")
        .write("src/deep/er/mod.rs", "")
        .write("docs/guide.md", "")
        .write("main.rs", "");
    let all_rust = call_ok(tree.root(), "Glob", json!({"pattern": "**/*.rs"})).await;
    assert_eq!(
        all_rust,
        paths(&tree, &["main.rs", "src/deep/er/mod.rs", "src/lib.rs"])
    );

    let top_level = call_ok(tree.root(), "Glob", json!({"pattern": "*.md"})).await;
    assert_eq!(top_level, paths(&tree, &["README.md"]));

    let under_src = call_ok(tree.root(), "Glob", json!({"pattern": "src/**/*.{rs,md}"})).await;
    assert_eq!(
        under_src,
        paths(&tree, &["src/deep/er/mod.rs", "src/lib.rs"])
    );

    let in_path = json!({"pattern": "*.md", "path": "docs"});
    assert_eq!(
        call_ok(tree.root(), "Glob", in_path).await,
        paths(&tree, &["docs/guide.md"])
    );

    let absolute = format!("{}/src/**/*.rs", tree.root().display());
    let absolute = call_ok(tree.root(), "Glob", json!({"pattern": absolute})).await;
    assert_eq!(
        absolute,
        paths(&tree, &["src/deep/er/mod.rs", "src/lib.rs"])
    );
}

#[tokio::test]
async fn order_follows_modification_times_set_explicitly() {
    let mut tree = Tree::new();
    tree.write("a.txt", "")
        .write("b.txt", "")
        .write("c.txt", "");
    let base = SystemTime::UNIX_EPOCH + Duration::from_secs(1_900_000_000);
    set_mtime(&tree.path("b.txt"), base + Duration::from_secs(3));
    set_mtime(&tree.path("c.txt"), base + Duration::from_secs(2));
    set_mtime(&tree.path("a.txt"), base + Duration::from_secs(1));
    let found = call_ok(tree.root(), "Glob", json!({"pattern": "*.txt"})).await;
    assert_eq!(found, paths(&tree, &["b.txt", "c.txt", "a.txt"]));
}

#[tokio::test]
async fn hidden_and_gitignored_files_are_skipped_unless_the_pattern_names_them() {
    let mut tree = Tree::new();
    tree.mkdir(".git")
        .write(".gitignore", "target/\n*.tmp\n")
        .write("kept.rs", "")
        .write("target/out.rs", "")
        .write("scratch.tmp", "")
        .write(".hidden/secret.rs", "")
        .write(".env", "")
        .write("config/.env.local", "")
        .write(".github/workflows/ci.yml", "");
    let everything = call_ok(tree.root(), "Glob", json!({"pattern": "**/*"})).await;
    assert_eq!(everything, paths(&tree, &["kept.rs"]));

    let dotenv = call_ok(tree.root(), "Glob", json!({"pattern": "**/.env*"})).await;
    assert_eq!(dotenv, paths(&tree, &["config/.env.local", ".env"]));

    let workflows = call_ok(tree.root(), "Glob", json!({"pattern": ".github/**/*.yml"})).await;
    assert_eq!(workflows, paths(&tree, &[".github/workflows/ci.yml"]));
}

#[tokio::test]
async fn more_than_a_hundred_files_are_cut_with_a_note() {
    let mut tree = Tree::new();
    for index in 0..105 {
        tree.write(&format!("f{index:03}.txt"), "");
    }
    let found = call_ok(tree.root(), "Glob", json!({"pattern": "*.txt"})).await;
    let lines: Vec<&str> = found.lines().collect();
    assert_eq!(lines.len(), 101);
    assert_eq!(lines[0], tree.path("f104.txt").display().to_string());
    assert_eq!(lines[99], tree.path("f005.txt").display().to_string());
    assert_eq!(
        lines[100],
        "(Showing the 100 most recently modified of 105 files; 5 more not shown. Use a narrower \
         pattern or path to see them.)"
    );
}

#[tokio::test]
async fn no_match_bad_pattern_and_missing_directory_are_reported() {
    let mut tree = Tree::new();
    tree.write("a.txt", "");
    assert_eq!(
        call_ok(tree.root(), "Glob", json!({"pattern": "*.rs"})).await,
        "No files found"
    );
    assert_eq!(
        call_ok(tree.root(), "Glob", json!({"pattern": "nope/**/*.rs"})).await,
        "No files found"
    );

    let bad = call(tree.root(), "Glob", json!({"pattern": "[a-"})).await;
    assert!(bad.is_error);
    assert!(
        bad.content
            .text()
            .starts_with("Invalid glob pattern `[a-`: "),
        "{bad:?}"
    );

    let missing = call(tree.root(), "Glob", json!({"pattern": "*", "path": "gone"})).await;
    assert!(missing.is_error);
    assert_eq!(
        missing.content.text(),
        format!("Directory does not exist: {}", tree.path("gone").display())
    );
}
