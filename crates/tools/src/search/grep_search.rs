//! The search behind `Grep`: ripgrep's walker, matcher, searcher and printers, run in-process
//! on as many threads as `rg` would use.
//!
//! Like `rg` in its parallel mode, each thread owns a searcher and a printer and buffers one
//! file's output at a time; unlike `rg`, the buffers are kept and put in a stable order at the
//! end (path order, or newest first for file lists) instead of being printed as they finish.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::SystemTime;

use grep_printer::{StandardBuilder, SummaryBuilder, SummaryKind};
use grep_regex::RegexMatcher;
use grep_searcher::{BinaryDetection, Searcher, Sink, SinkMatch};
use ignore::overrides::Override;
use ignore::types::Types;
use ignore::{DirEntry, ParallelVisitor, ParallelVisitorBuilder, WalkState};
use rustix::fs::{FileType, Mode, OFlags};
use tokio_util::sync::CancellationToken;

/// Lines longer than this many bytes are shown cut, with a note of how many matches were left
/// out (rg's `--max-columns 500 --max-columns-preview`): a match in minified code should not
/// cost the model a megabyte of context.
pub(super) const MAX_COLUMNS: u64 = 500;

/// What `Grep` reports for each file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Report {
    /// Matching lines and their context, as rg prints them.
    Content,
    /// The number of matching lines, as `rg --count`.
    Count,
    /// Only whether the file matches, as `rg --files-with-matches`.
    FilesWithMatches,
}

/// Whether the printer prefixes each line with the file's path: rg does when it searches a
/// directory and not when it is given one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FileNames {
    Shown,
    Hidden,
}

/// One search, fully configured, ready to run on a blocking thread.
#[derive(Debug)]
pub(super) struct GrepQuery {
    pub root: PathBuf,
    /// The session's working directory, for git's global excludes.
    pub cwd: PathBuf,
    pub matcher: RegexMatcher,
    /// A template: each thread clones it and sets binary detection per file.
    pub searcher: Searcher,
    pub report: Report,
    pub file_names: FileNames,
    pub overrides: Override,
    pub types: Types,
}

/// A file that produced output.
#[derive(Debug)]
pub(super) struct FileHit {
    pub path: PathBuf,
    /// Only looked up for `Report::FilesWithMatches`, which sorts by it.
    pub modified: Option<SystemTime>,
    /// What the printer wrote for this file (empty for `Report::FilesWithMatches`).
    pub output: Vec<u8>,
}

/// Runs the search; `None` when `cancel` fired before it finished.
pub(super) fn run_search(query: &GrepQuery, cancel: &CancellationToken) -> Option<Vec<FileHit>> {
    let hits = Mutex::new(Vec::new());
    let mut builder = WorkerBuilder {
        query,
        cancel,
        hits: &hits,
    };
    super::rg_walk_builder(&query.root, &query.cwd)
        .overrides(query.overrides.clone())
        .types(query.types.clone())
        .build_parallel()
        .visit(&mut builder);
    if cancel.is_cancelled() {
        return None;
    }
    Some(hits.into_inner().unwrap_or_else(PoisonError::into_inner))
}

struct WorkerBuilder<'q> {
    query: &'q GrepQuery,
    cancel: &'q CancellationToken,
    hits: &'q Mutex<Vec<FileHit>>,
}

impl<'q> ParallelVisitorBuilder<'q> for WorkerBuilder<'q> {
    fn build(&mut self) -> Box<dyn ParallelVisitor + 'q> {
        Box::new(Worker {
            cancel: self.cancel,
            shared: self.hits,
            searcher: self.query.searcher.clone(),
            search_file: file_searcher(self.query),
            hits: Vec::new(),
        })
    }
}

/// Searches one file with the thread's searcher and returns what it found. The closure owns
/// the thread's printer, reused for every file; `grep-printer` names its writer type only
/// through `termcolor`, which a closure lets us leave unnamed.
type SearchFile<'q> = Box<dyn FnMut(&mut Searcher, &DirEntry) -> Option<FileHit> + Send + 'q>;

fn file_searcher(query: &GrepQuery) -> SearchFile<'_> {
    let matcher = &query.matcher;
    let shown = query.file_names == FileNames::Shown;
    // A file that cannot be read is skipped, as rg skips it (rg also warns on stderr), so
    // search errors are dropped below.
    match query.report {
        Report::Content => {
            let mut printer = StandardBuilder::new()
                .heading(false)
                .path(shown)
                .max_columns(Some(MAX_COLUMNS))
                .max_columns_preview(true)
                .build_no_color(Vec::new());
            Box::new(move |searcher, entry| {
                let path = entry.path();
                let file = open_regular(path)?;
                let _ = if shown {
                    searcher.search_file(matcher, &file, printer.sink_with_path(matcher, path))
                } else {
                    searcher.search_file(matcher, &file, printer.sink(matcher))
                };
                let output = std::mem::take(printer.get_mut().get_mut());
                hit(path, output)
            })
        }
        Report::Count => {
            let mut printer = SummaryBuilder::new()
                .kind(SummaryKind::Count)
                .path(shown)
                .exclude_zero(true)
                .build_no_color(Vec::new());
            Box::new(move |searcher, entry| {
                let path = entry.path();
                let file = open_regular(path)?;
                let _ = if shown {
                    searcher.search_file(matcher, &file, printer.sink_with_path(matcher, path))
                } else {
                    searcher.search_file(matcher, &file, printer.sink(matcher))
                };
                let output = std::mem::take(printer.get_mut().get_mut());
                hit(path, output)
            })
        }
        Report::FilesWithMatches => Box::new(move |searcher, entry| {
            let mut first = FirstMatch { found: false };
            let file = open_regular(entry.path())?;
            let _ = searcher.search_file(matcher, &file, &mut first);
            if !first.found {
                return None;
            }
            let modified = entry.metadata().ok().and_then(|meta| meta.modified().ok());
            Some(FileHit {
                path: entry.path().to_path_buf(),
                modified,
                output: Vec::new(),
            })
        }),
    }
}

/// Opens `path` to search it, or `None` for what is not a regular file. The open does not
/// wait (`O_NONBLOCK`: a FIFO with no writer would block it for ever, even one swapped in
/// after the walk saw a regular file), and the kind is the opened file's own (`fstat`), so
/// a FIFO, socket or device is skipped as a file that cannot be read.
fn open_regular(path: &Path) -> Option<File> {
    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()?;
    let stat = rustix::fs::fstat(&fd).ok()?;
    (FileType::from_raw_mode(stat.st_mode) == FileType::RegularFile).then(|| File::from(fd))
}

/// A file with printed output; a file that printed nothing did not match.
fn hit(path: &Path, output: Vec<u8>) -> Option<FileHit> {
    (!output.is_empty()).then(|| FileHit {
        path: path.to_path_buf(),
        modified: None,
        output,
    })
}

struct Worker<'q> {
    cancel: &'q CancellationToken,
    shared: &'q Mutex<Vec<FileHit>>,
    searcher: Searcher,
    search_file: SearchFile<'q>,
    hits: Vec<FileHit>,
}

impl Worker<'_> {
    fn search(&mut self, entry: &DirEntry) {
        // rg quits on a NUL byte in files it found by walking, but searches a file it was
        // given by name to the end, with a "binary file matches" note.
        let binary = if entry.depth() == 0 {
            BinaryDetection::convert(b'\0')
        } else {
            BinaryDetection::quit(b'\0')
        };
        self.searcher.set_binary_detection(binary);
        if let Some(hit) = (self.search_file)(&mut self.searcher, entry) {
            self.hits.push(hit);
        }
    }
}

impl ParallelVisitor for Worker<'_> {
    fn visit(&mut self, entry: Result<DirEntry, ignore::Error>) -> WalkState {
        if self.cancel.is_cancelled() {
            return WalkState::Quit;
        }
        // Unreadable directories and broken ignore files are skipped, as rg skips them.
        let Ok(entry) = entry else {
            return WalkState::Continue;
        };
        if is_searchable(&entry) {
            self.search(&entry);
        }
        WalkState::Continue
    }
}

impl Drop for Worker<'_> {
    fn drop(&mut self) {
        let mut shared = self.shared.lock().unwrap_or_else(PoisonError::into_inner);
        shared.append(&mut self.hits);
    }
}

/// rg searches regular files it finds and anything it was given by name; it skips
/// directories and, when not following links, symbolic links.
fn is_searchable(entry: &DirEntry) -> bool {
    match entry.file_type() {
        Some(kind) if entry.depth() == 0 => !kind.is_dir(),
        Some(kind) => kind.is_file(),
        None => false,
    }
}

/// Stops a file's search at its first match: enough to list the file.
struct FirstMatch {
    found: bool,
}

impl Sink for FirstMatch {
    type Error = io::Error;

    fn matched(&mut self, _searcher: &Searcher, _mat: &SinkMatch<'_>) -> Result<bool, io::Error> {
        self.found = true;
        Ok(false)
    }
}
