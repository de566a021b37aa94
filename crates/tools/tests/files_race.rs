//! The symlink-swap race: a thread swaps a directory link in a tight loop while the Write tool
//! runs thousands of times the way the engine runs it (prepare, the permission gate's check,
//! execute). Nothing may ever land outside the workspace: each call writes inside, is refused
//! by the gate (it saw the link leading out), or fails because a link appeared after the
//! check. The same race against the per-component fallback walk on its own.

#![allow(
    clippy::unwrap_used,
    reason = "test setup: a step that fails should fail the test at once"
)]

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use cairn_policy::rules::RuleSet;
use cairn_policy::{Asking, CallInfo, PermissionGate, PermissionMode, Verdict};
use cairn_tools::beneath::{BeneathError, JudgedPath, Walk, write_atomically};
use cairn_tools::{
    Access, CallContext, Destructiveness, ToolCall, ToolContext, ToolExecutor, ToolRegistry,
    WriteTool,
};
use pretty_assertions::assert_eq;
use serde_json::json;
use tokio_util::sync::CancellationToken;

const CALLS: usize = 2_000;

/// How the link is swapped.
#[derive(Debug, Clone, Copy)]
enum Swap {
    /// `dir` is a link renamed in turn to point at `inside/` and at the outside directory.
    FlipLink,
    /// `dir` is a real directory inside, exchanged (`RENAME_EXCHANGE`) with a link out: the
    /// resolved path itself turns into a link.
    ExchangeDirWithLink,
}

struct Race {
    _base: tempfile::TempDir,
    workspace: PathBuf,
    outside: PathBuf,
    stop: Arc<AtomicBool>,
    swaps: Arc<AtomicUsize>,
    swapper: Option<std::thread::JoinHandle<()>>,
}

impl Race {
    fn start(swap: Swap) -> Race {
        let base = tempfile::tempdir().unwrap();
        let root = base.path().canonicalize().unwrap();
        let workspace = root.join("workspace");
        let outside = root.join("outside");
        fs::create_dir_all(workspace.join("inside")).unwrap();
        fs::create_dir(&outside).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let swaps = Arc::new(AtomicUsize::new(0));
        let swapper = {
            let (workspace, outside) = (workspace.clone(), outside.clone());
            let (stop, swaps) = (Arc::clone(&stop), Arc::clone(&swaps));
            match swap {
                Swap::FlipLink => symlink("inside", workspace.join("dir")).unwrap(),
                Swap::ExchangeDirWithLink => {
                    fs::create_dir(workspace.join("dir")).unwrap();
                    symlink(&outside, workspace.join("dir.link")).unwrap();
                }
            }
            std::thread::spawn(move || {
                let targets = [outside.as_path(), Path::new("inside")];
                let mut turn = 0;
                while !stop.load(Ordering::Relaxed) {
                    match swap {
                        Swap::FlipLink => {
                            let next = workspace.join("dir.next");
                            symlink(targets[turn % 2], &next).unwrap();
                            fs::rename(&next, workspace.join("dir")).unwrap();
                        }
                        Swap::ExchangeDirWithLink => {
                            rustix::fs::renameat_with(
                                rustix::fs::CWD,
                                workspace.join("dir"),
                                rustix::fs::CWD,
                                workspace.join("dir.link"),
                                rustix::fs::RenameFlags::EXCHANGE,
                            )
                            .unwrap();
                        }
                    }
                    turn += 1;
                    swaps.fetch_add(1, Ordering::Relaxed);
                }
            })
        };
        Race {
            _base: base,
            workspace,
            outside,
            stop,
            swaps,
            swapper: Some(swapper),
        }
    }

    fn finish(&mut self) -> usize {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(swapper) = self.swapper.take() {
            swapper.join().unwrap();
        }
        assert_eq!(
            fs::read_dir(&self.outside).unwrap().count(),
            0,
            "a write landed outside the workspace"
        );
        self.swaps.load(Ordering::Relaxed)
    }
}

/// Every regular file under `dir`, links not followed.
fn files_under(dir: &Path) -> usize {
    fs::read_dir(dir)
        .unwrap()
        .map(|entry| {
            let entry = entry.unwrap();
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                files_under(&entry.path())
            } else {
                usize::from(kind.is_file())
            }
        })
        .sum()
}

/// What became of one call.
#[derive(Debug, Default, PartialEq)]
struct Tally {
    written: usize,
    refused_by_gate: usize,
    failed_on_link: usize,
}

#[tokio::test]
async fn write_never_lands_outside_while_a_directory_link_is_swapped() {
    for swap in [Swap::FlipLink, Swap::ExchangeDirWithLink] {
        let mut race = Race::start(swap);
        let workspace = race.workspace.clone();
        let mut registry = ToolRegistry::new(ToolContext::new(workspace.clone()));
        registry.register(WriteTool);
        let gate = PermissionGate::new(
            PermissionMode::AcceptEdits,
            RuleSet::default(),
            vec![workspace.clone()],
            workspace.clone(),
            race.outside.clone(),
        );
        let cx = CallContext::detached(CancellationToken::new());
        let mut tally = Tally::default();
        for index in 0..CALLS {
            let path = workspace.join(format!("dir/f{index}.txt"));
            let call = ToolCall {
                id: format!("w{index}"),
                name: "Write".into(),
                input: json!({"file_path": path, "content": "export EVIL=1\n"}),
            };
            let prepared = registry.prepare(&call).unwrap();
            let verdict = gate.check(&CallInfo {
                tool: &prepared.name,
                input: &prepared.input,
                paths: &prepared.paths,
                read_only: prepared.safety.access == Access::ReadOnly,
                destructive: prepared.safety.destructive == Destructiveness::Destructive,
                asking: Asking::NonInteractive,
            });
            if !matches!(verdict, Verdict::Allow { .. }) {
                tally.refused_by_gate += 1;
                continue;
            }
            let output = registry.execute(&prepared, &cx).await;
            let text = output.content.text();
            if !output.is_error {
                assert!(text.starts_with("Created "), "{swap:?}: {text}");
                tally.written += 1;
            } else {
                assert!(
                    text.contains(&path.display().to_string())
                        && text.contains("symbolic link now stands on the way"),
                    "{swap:?}: an error other than the swapped link: {text}"
                );
                tally.failed_on_link += 1;
            }
        }
        let swaps = race.finish();
        assert_eq!(
            files_under(&workspace),
            tally.written,
            "{swap:?}: every written file is inside"
        );
        assert_eq!(
            tally.written + tally.refused_by_gate + tally.failed_on_link,
            CALLS
        );
        // The race really ran: some calls met the link leading out.
        assert!(swaps > 0 && tally.written < CALLS, "{swap:?}: {tally:?}");
        assert!(
            matches!(swap, Swap::FlipLink) || tally.failed_on_link + tally.refused_by_gate > 0,
            "{swap:?}: {tally:?}"
        );
    }
}

#[test]
fn the_fallback_walk_never_lands_outside_while_a_directory_link_is_swapped() {
    for swap in [Swap::FlipLink, Swap::ExchangeDirWithLink] {
        let mut race = Race::start(swap);
        let roots = [race.workspace.clone()];
        let (mut written, mut judged_outside, mut failed_on_link) = (0, 0, 0);
        for index in 0..CALLS {
            let judged = JudgedPath::resolve(&race.workspace.join(format!("dir/g{index}")), &roots);
            // What the gate would refuse never reaches the write.
            if !judged.path().starts_with(&race.workspace) {
                judged_outside += 1;
                continue;
            }
            match write_atomically(&judged, b"export EVIL=1\n", Walk::Components) {
                Ok(()) => written += 1,
                Err(BeneathError::LinkAppeared { path }) => {
                    assert_eq!(path, judged.path());
                    failed_on_link += 1;
                }
                Err(other) => panic!("{swap:?}: {other}"),
            }
        }
        let workspace = race.workspace.clone();
        let swaps = race.finish();
        assert_eq!(files_under(&workspace), written, "{swap:?}");
        assert!(
            swaps > 0 && judged_outside + failed_on_link > 0,
            "{swap:?}: {written} written, {judged_outside} judged outside, {failed_on_link} \
             failed on a link"
        );
    }
}
