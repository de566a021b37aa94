//! The layering rule of the README's layout table (a crate depends only on crates listed below
//! it, so no service depends on the engine or a face), and the rules that keep the repository
//! explaining itself: no source cites a document it does not hold, and docs/ARCHITECTURE.md maps
//! every crate.

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

/// Every file under `dir`, recursively (build output left out).
fn files_under(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let kind = entry.file_type().unwrap();
            if kind.is_dir() && entry.file_name() != "target" {
                pending.push(path);
            } else if kind.is_file() {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

#[test]
fn no_source_cites_a_document_outside_the_repository() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    // Spelled in two pieces, so that this file does not name them itself.
    let outside = ["DESIGN", "STYLE"].map(|name| format!("{name}.md"));
    let mut files = files_under(&root.join("crates"));
    files.extend(files_under(&root.join("docs")));
    files.extend(
        ["README.md", "SECURITY.md", "PARITY.md"]
            .iter()
            .map(|name| root.join(name)),
    );
    let mut citing = Vec::new();
    for file in files {
        let text = String::from_utf8_lossy(&std::fs::read(&file).unwrap()).into_owned();
        for name in &outside {
            if text.contains(name.as_str()) {
                let shown = file.strip_prefix(&root).unwrap_or(&file);
                citing.push(format!("{} cites {name}", shown.display()));
            }
        }
    }
    assert_eq!(
        citing,
        Vec::<String>::new(),
        "the repository explains itself: say the point, or point to docs/ARCHITECTURE.md"
    );
}

#[test]
fn the_architecture_guide_maps_every_crate() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let guide = std::fs::read_to_string(root.join("docs/ARCHITECTURE.md")).unwrap();
    let code_map = &guide[guide.find("\n## Code map").expect("a Code map section")..];
    let code_map = &code_map[..code_map[1..]
        .find("\n## ")
        .map_or(code_map.len(), |end| end + 1)];
    let mut mapped: Vec<String> = code_map
        .lines()
        .filter_map(|line| line.strip_prefix("### `crates/")?.strip_suffix('`'))
        .map(str::to_string)
        .collect();
    mapped.sort();
    let mut on_disk: Vec<String> = std::fs::read_dir(root.join("crates"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    on_disk.sort();
    assert_eq!(
        mapped, on_disk,
        "docs/ARCHITECTURE.md's code map has a `### `crates/<name>`` heading for every crate"
    );
}

/// The faces are codecs over the session host: the interactive UI (`crates/tui/src`, and
/// `interactive.rs` that starts it) and `cairn -p` (`headless.rs`) build no engine, run no
/// hook, parse no slash line and clean up no shell of their own. Each pattern is what doing
/// one of those would take; the session host (`crates/core/src/host.rs`) and the command
/// table (`crates/core/src/commands.rs`) are where they happen.
#[test]
fn the_faces_build_no_engine_run_no_hook_and_parse_no_slash_line() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = files_under(&root.join("crates/tui/src"));
    files.extend(
        [
            "crates/cli/src/headless.rs",
            "crates/cli/src/interactive.rs",
        ]
        .iter()
        .map(|name| root.join(name)),
    );
    let forbidden = [
        ("Engine::new", "builds an engine"),
        ("engine.run(", "runs the engine's loop itself"),
        ("with_session_log", "records the session itself"),
        ("run_hooks", "runs hooks"),
        ("HookEvent::", "runs hooks"),
        ("HookRunner", "runs hooks"),
        ("strip_prefix('/')", "parses slash lines"),
        ("starts_with('/')", "parses slash lines"),
        ("compact_request", "parses slash lines"),
        ("custom_command_turn", "parses slash lines"),
        (".shells.kill_all", "cleans up background shells"),
        ("add_context(", "carries SessionStart's context itself"),
    ];
    let mut found = Vec::new();
    for file in files
        .iter()
        .filter(|file| file.extension().is_some_and(|ext| ext == "rs"))
    {
        let text = std::fs::read_to_string(file).unwrap();
        for (pattern, what) in forbidden {
            if text.contains(pattern) {
                let shown = file.strip_prefix(&root).unwrap_or(file);
                found.push(format!("{} {what} ({pattern})", shown.display()));
            }
        }
    }
    assert_eq!(
        found,
        Vec::<String>::new(),
        "a face goes through the session host"
    );
}
