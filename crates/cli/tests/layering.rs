//! The layering rule of the README's layout table: a crate depends only on crates listed below
//! it, so no service depends on the engine or a face.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::path::Path;

/// The crates in the order of the README's layout table, top to bottom.
fn table_order(readme: &str) -> Vec<String> {
    let layout = &readme[readme.find("## Layout").expect("a Layout section")..];
    layout
        .lines()
        .skip_while(|line| !line.starts_with("| crate"))
        .skip(2)
        .take_while(|line| line.starts_with('|'))
        .filter_map(|line| {
            let name = line.split('|').nth(1)?.trim().trim_matches('`');
            name.strip_prefix("cairn-").map(str::to_string)
        })
        .collect()
}

/// The cairn crates `manifest` depends on outside its dev-dependencies.
fn cairn_dependencies(manifest: &str) -> Vec<String> {
    let mut in_dependencies = false;
    let mut found = Vec::new();
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_dependencies = line.ends_with("dependencies]") && !line.contains("dev-dependencies");
            continue;
        }
        if in_dependencies && let Some(rest) = line.strip_prefix("cairn-") {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            found.push(name);
        }
    }
    found
}

#[test]
fn every_crate_depends_only_on_crates_listed_below_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let order = table_order(&std::fs::read_to_string(root.join("README.md")).unwrap());
    let mut on_disk: Vec<String> = std::fs::read_dir(root.join("crates"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    on_disk.sort();
    let mut listed = order.clone();
    listed.sort();
    assert_eq!(listed, on_disk, "the table lists every crate once");

    let mut upward = Vec::new();
    for (position, name) in order.iter().enumerate() {
        let manifest =
            std::fs::read_to_string(root.join("crates").join(name).join("Cargo.toml")).unwrap();
        for dependency in cairn_dependencies(&manifest) {
            let at = order.iter().position(|listed| *listed == dependency);
            if at.is_none_or(|at| at <= position) {
                upward.push(format!("cairn-{name} -> cairn-{dependency}"));
            }
        }
    }
    assert_eq!(
        upward,
        Vec::<String>::new(),
        "dependencies on a crate not below"
    );
}
