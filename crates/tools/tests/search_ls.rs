//! `LS` on real temp trees: the tree layout, ignore rules and globs, the cap, errors.

mod search_support;

use pretty_assertions::assert_eq;
use search_support::{Tree, call, call_ok};
use serde_json::json;

#[tokio::test]
async fn lists_an_indented_tree_with_directories_marked() {
    let mut tree = Tree::new();
    tree.write("Cargo.toml", "")
        .write("src/lib.rs", "")
        .write("src/search/grep.rs", "")
        .write("src/search/mod.rs", "")
        .write("README.md", "")
        .mkdir("empty");
    let root = tree.root().display().to_string();
    let listing = call_ok(tree.root(), "LS", json!({"path": root})).await;
    assert_eq!(
        listing,
        format!(
            "- {root}/\n\
             \x20 - Cargo.toml\n\
             \x20 - README.md\n\
             \x20 - empty/\n\
             \x20 - src/\n\
             \x20   - lib.rs\n\
             \x20   - search/\n\
             \x20     - grep.rs\n\
             \x20     - mod.rs"
        )
    );
}

#[tokio::test]
async fn hidden_gitignored_and_ignore_glob_entries_are_left_out() {
    let mut tree = Tree::new();
    tree.mkdir(".git")
        .write(".gitignore", "target/\n")
        .write(".env", "")
        .write("target/debug/app", "")
        .write("node_modules/pkg/index.js", "")
        .write("logs/today.log", "")
        .write("logs/keep.txt", "")
        .write("src/main.rs", "");
    let sub = tree.path("src");
    let relative = call_ok(tree.root(), "LS", json!({"path": "src"})).await;
    assert_eq!(relative, format!("- {}/\n  - main.rs", sub.display()));

    let input = json!({"path": tree.root(), "ignore": ["node_modules/", "*.log"]});
    let listing = call_ok(tree.root(), "LS", input).await;
    assert_eq!(
        listing,
        format!(
            "- {}/\n  - logs/\n    - keep.txt\n  - src/\n    - main.rs",
            tree.root().display()
        )
    );
}

#[tokio::test]
async fn a_big_tree_is_cut_shallowest_first_with_a_note() {
    let mut tree = Tree::new();
    for top in 0..10 {
        for leaf in 0..120 {
            tree.write(&format!("d{top}/f{leaf:03}.txt"), "");
        }
    }
    tree.write("top.txt", "");
    let listing = call_ok(tree.root(), "LS", json!({"path": tree.root()})).await;
    let lines: Vec<&str> = listing.lines().collect();
    // The root line, 1000 entries, the note.
    assert_eq!(lines.len(), 1002);
    for top in 0..10 {
        assert!(
            lines.contains(&format!("  - d{top}/").as_str()),
            "d{top}/ is listed"
        );
    }
    assert!(lines.contains(&"  - top.txt"));
    assert_eq!(
        lines[1001],
        "(Showing 1000 of 1211 entries, the shallowest levels first. List a subdirectory, add \
         `ignore` globs, or use Glob to see more.)"
    );
}

#[tokio::test]
async fn empty_missing_and_file_paths_are_reported() {
    let mut tree = Tree::new();
    tree.mkdir("empty").write("file.txt", "x");
    let empty = call_ok(tree.root(), "LS", json!({"path": "empty"})).await;
    assert_eq!(
        empty,
        format!(
            "- {}/\n  (nothing to list: the directory is empty, or all of it is hidden or ignored)",
            tree.path("empty").display()
        )
    );

    let missing = call(tree.root(), "LS", json!({"path": "gone"})).await;
    assert!(missing.is_error);
    assert_eq!(
        missing.content.text(),
        format!("Directory does not exist: {}", tree.path("gone").display())
    );

    let file = call(tree.root(), "LS", json!({"path": "file.txt"})).await;
    assert!(file.is_error);
    assert_eq!(
        file.content.text(),
        format!(
            "{} is a file, not a directory. Use Read to see a file's contents.",
            tree.path("file.txt").display()
        )
    );

    let no_path = call(tree.root(), "LS", json!({})).await;
    assert!(no_path.is_error);
    assert_eq!(
        no_path.content.text(),
        "Invalid input for LS: missing field `path`."
    );
}
