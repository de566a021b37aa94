//! What the search tools' integration tests share: a temp tree, a way to call a tool the way
//! the engine does, and ripgrep's output to compare with (see [`rg`]).
// Not every test file uses every helper; panicking on a broken fixture is the point.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

use cairn_tools::{ToolCall, ToolContext, ToolExecutor, ToolOutput, ToolRegistry};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// A temp directory to build a file tree in.
pub struct Tree {
    dir: tempfile::TempDir,
    /// Every file written gets a distinct modification time, a minute apart, in write order,
    /// so "newest first" is known without sleeping.
    next_mtime: SystemTime,
}

impl Tree {
    pub fn new() -> Tree {
        Tree {
            dir: tempfile::tempdir().unwrap(),
            next_mtime: SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000),
        }
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn root_str(&self) -> &str {
        self.root().to_str().unwrap()
    }

    pub fn path(&self, relative: &str) -> PathBuf {
        self.root().join(relative)
    }

    /// Writes `relative` (creating its directories) with the next modification time.
    pub fn write(&mut self, relative: &str, contents: impl AsRef<[u8]>) -> &mut Tree {
        let path = self.path(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, contents).unwrap();
        self.next_mtime += Duration::from_secs(60);
        set_mtime(&path, self.next_mtime);
        self
    }

    pub fn mkdir(&mut self, relative: &str) -> &mut Tree {
        std::fs::create_dir_all(self.path(relative)).unwrap();
        self
    }
}

pub fn set_mtime(path: &Path, time: SystemTime) {
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(time)
        .unwrap();
}

/// Calls tool `name` through the registry, as the engine would: prepare, then execute.
pub async fn call(cwd: &Path, name: &str, input: Value) -> ToolOutput {
    let registry = ToolRegistry::with_builtins(ToolContext::new(cwd.to_path_buf()));
    let call = ToolCall {
        id: "toolu_1".into(),
        name: name.into(),
        input,
    };
    let prepared = match registry.prepare(&call) {
        Ok(prepared) => prepared,
        Err(output) => return output,
    };
    registry
        .execute(
            &prepared,
            &cairn_tools::CallContext::detached(CancellationToken::new()),
        )
        .await
}

/// The text of a successful call; panics with the output otherwise.
pub async fn call_ok(cwd: &Path, name: &str, input: Value) -> String {
    let output = call(cwd, name, input).await;
    assert!(!output.is_error, "{name} failed: {output:?}");
    output.content.text().to_string()
}

/// What `rg ARGS` prints, run from `dir` (a temp tree), without its trailing newline.
///
/// ripgrep's output is the reference, kept as checked-in fixtures so that the tests need no
/// `rg`: `fixtures/rg/<test>.<n>.txt` holds the n-th rg run of a test — the rg version that
/// made it, its arguments and its output, with `dir` written `<root>`. Where it comes from:
///
/// - by default, the fixture (whose arguments must be the ones asked for);
/// - with `CAIRN_REGEN_RG=1` (`fixtures/rg/regen.sh`), the real `rg`, written to the fixture;
/// - with the `interop` feature (the interop suite), the real `rg`, which must print what the
///   fixture says, so the Grep tests compare with the installed ripgrep itself.
pub fn rg(dir: &Path, args: &[&str]) -> String {
    let fixture = RgFixture::next(dir, args);
    if std::env::var_os("CAIRN_REGEN_RG").is_some() {
        let output = run_rg(dir, args);
        fixture.write(&rg_version(), &output);
        output
    } else if cfg!(feature = "interop") {
        let output = run_rg(dir, args);
        fixture.assert_made(&output);
        output
    } else {
        fixture.read()
    }
}

/// How to remake the fixtures, for the messages that ask for it.
const REGENERATE: &str = "regenerate them with crates/tools/tests/fixtures/rg/regen.sh (it needs \
                          ripgrep on PATH)";

/// One rg run of a test, and the file that holds its expected output.
struct RgFixture {
    path: PathBuf,
    root: String,
    /// The arguments with the tree's root written `<root>`.
    args: Vec<String>,
}

impl RgFixture {
    /// The fixture of the calling test's next rg run: tests run on threads named after them,
    /// and a test's runs are numbered in order.
    fn next(dir: &Path, args: &[&str]) -> RgFixture {
        thread_local! {
            static RUNS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
        }
        let run = RUNS.with(|runs| {
            runs.set(runs.get() + 1);
            runs.get()
        });
        let thread = std::thread::current();
        let test = thread
            .name()
            .filter(|name| *name != "main")
            .expect("rg fixtures are named after the test's thread");
        let test = test.rsplit("::").next().unwrap_or(test);
        let root = dir.to_str().unwrap().to_string();
        RgFixture {
            path: Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/rg")
                .join(format!("{test}.{run}.txt")),
            args: args
                .iter()
                .map(|arg| arg.replace(&root, "<root>"))
                .collect(),
            root,
        }
    }

    /// The output the fixture holds, for the tree at hand.
    fn read(&self) -> String {
        let text = std::fs::read_to_string(&self.path).unwrap_or_else(|err| {
            panic!(
                "no rg fixture {} ({err}) for `rg {}`: {REGENERATE}",
                self.path.display(),
                self.args.join(" ")
            )
        });
        let (version, args, output) = parse_fixture(&text).unwrap_or_else(|| {
            panic!("{} is not an rg fixture: {REGENERATE}", self.path.display())
        });
        assert_eq!(
            args,
            self.args,
            "{} holds the output of other arguments (made with {version}): {REGENERATE}",
            self.path.display()
        );
        output.replace("<root>", &self.root)
    }

    /// Checks that `output`, rg's output now, is what the fixture holds; in any order unless
    /// rg was asked to sort (its parallel walk lists files in no set order).
    fn assert_made(&self, output: &str) {
        let expected = self.read();
        let text = std::fs::read_to_string(&self.path).unwrap();
        let made_with = text.lines().next().unwrap_or_default();
        let (output, expected) = if self.args.iter().any(|arg| arg == "--sort") {
            (output.to_string(), expected)
        } else {
            (
                sorted_lines(output).join("\n"),
                sorted_lines(&expected).join("\n"),
            )
        };
        assert_eq!(
            output,
            expected,
            "`rg {}` no longer prints what {} holds (made with {made_with}; installed: {}). If \
             the new output is right, {REGENERATE}",
            self.args.join(" "),
            self.path.display(),
            rg_version()
        );
    }

    fn write(&self, version: &str, output: &str) {
        let args = serde_json::to_string(&self.args).unwrap();
        let output = output.replace(&self.root, "<root>");
        std::fs::create_dir_all(self.path.parent().unwrap()).unwrap();
        std::fs::write(&self.path, format!("{version}\n{args}\n{output}")).unwrap();
    }
}

/// A fixture's three parts: rg's version, its arguments, its output.
fn parse_fixture(text: &str) -> Option<(&str, Vec<String>, &str)> {
    let (version, rest) = text.split_once('\n')?;
    let (args, output) = rest.split_once('\n')?;
    Some((version, serde_json::from_str(args).ok()?, output))
}

/// Runs the real `rg`; panics if it is not installed, saying what needs it.
fn run_rg(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("rg")
        .arg("--no-config")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|err| {
            panic!(
                "cannot run `rg` ({err}). Making the rg fixtures and the interop suite compare \
                 with ripgrep itself: install it (`apt-get install ripgrep`, `brew install \
                 ripgrep`); .ci/run does."
            )
        });
    // 0: matches, 1: none; 2 is an error.
    assert!(
        matches!(output.status.code(), Some(0 | 1)),
        "rg {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8(output.stdout).unwrap();
    text.strip_suffix('\n').unwrap_or(&text).to_string()
}

/// The first line of `rg --version`: `ripgrep 14.1.1 (rev …)`.
fn rg_version() -> String {
    let output = Command::new("rg").arg("--version").output().unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    text.lines().next().unwrap_or_default().to_string()
}

/// The lines of `text`, sorted: for comparing outputs whose order is documented to differ.
pub fn sorted_lines(text: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort_unstable();
    lines
}
