//! `Read`: a text file as numbered lines, in the `cat -n` style the model expects; an image
//! as an image the model can see; a Jupyter notebook cell by cell.

use std::fs::File;
use std::io::{BufRead, BufReader, ErrorKind, Read as _};
use std::path::{Path, PathBuf};

use async_trait::async_trait;
use base64::Engine as _;
use cairn_protocol::{ImageSource, ToolResultBlock, ToolResultContent};
use rustix::fs::{FileType, Mode, OFlags};
use schemars::JsonSchema;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use crate::notebook::Notebook;
use crate::{Safety, Tool, ToolContext, ToolOutput};

const DEFAULT_LINE_LIMIT: usize = 2000;
const MAX_LINE_CHARS: usize = 2000;
/// How much of a file's start is checked for NUL bytes to call it binary.
const BINARY_SNIFF_BYTES: usize = 8192;
/// The largest image Read returns. The API refuses images over 5 MB of base64, which is
/// 3.75 MiB of image.
const MAX_IMAGE_BYTES: u64 = 5 * 1024 * 1024 / 4 * 3;
/// The largest notebook Read renders cell by cell; a larger one is shown as text lines.
const MAX_NOTEBOOK_BYTES: u64 = 16 * 1024 * 1024;
/// The most of a line Read keeps: enough for the 2000 characters it shows and one more.
const MAX_LINE_BYTES: usize = (MAX_LINE_CHARS + 1) * 4;
/// How far Read scans a text file, for the window and the line count after it.
const MAX_SCAN_BYTES: u64 = 64 * 1024 * 1024;
/// File name extensions of the image formats Read returns as images.
const IMAGE_EXTENSIONS: [&str; 5] = ["png", "jpg", "jpeg", "gif", "webp"];

/// Reads a file from the local filesystem.
#[derive(Debug, Clone, Copy)]
pub struct ReadTool;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadInput {
    /// The absolute path of the file to read.
    file_path: String,
    /// The line number to start reading from (1-based). Only for files too long to read at once.
    #[schemars(range(min = 1))]
    offset: Option<usize>,
    /// The number of lines to read. Only for files too long to read at once.
    #[schemars(range(min = 1))]
    limit: Option<usize>,
}

#[async_trait]
impl Tool for ReadTool {
    type Input = ReadInput;

    fn name(&self) -> &'static str {
        "Read"
    }

    fn description(&self) -> String {
        "Reads a file from the local filesystem. file_path should be absolute; relative paths \
         resolve against the working directory. By default up to 2000 lines are returned from \
         the start; use offset (1-based line number) and limit for long files. Lines are \
         numbered like `cat -n` (spaces, the line number, a tab, then the line), and lines \
         longer than 2000 characters are cut. Images (PNG, JPEG, GIF, WebP, up to 3.75 MB) are \
         shown to you as images. Jupyter notebooks (.ipynb) are shown cell by cell with their \
         outputs. offset and limit apply to text files only. Reading a file is required before \
         editing or overwriting it. To list a directory, use LS or Bash instead."
            .into()
    }

    fn safety(&self, _input: &ReadInput, _ctx: &ToolContext) -> Safety {
        Safety::READ_ONLY
    }

    fn touched_paths(&self, input: &ReadInput, ctx: &ToolContext) -> Vec<PathBuf> {
        vec![ctx.resolve(&input.file_path)]
    }

    async fn validate(&self, input: &ReadInput, ctx: &ToolContext) -> Result<(), String> {
        check_readable(&ctx.resolve(&input.file_path)).await
    }

    async fn run(
        &self,
        input: ReadInput,
        ctx: &ToolContext,
        _cancel: &CancellationToken,
    ) -> ToolOutput {
        let path = ctx.resolve(&input.file_path);
        if let Err(message) = check_readable(&path).await {
            return ToolOutput::error(message);
        }
        let window = Window {
            offset: input.offset.unwrap_or(1).max(1),
            limit: input.limit.unwrap_or(DEFAULT_LINE_LIMIT),
        };
        let shown = path.clone();
        // On a blocking thread: it reads the file, however slow the disk.
        let result = tokio::task::spawn_blocking(move || read_file(&shown, window)).await;
        let read = match result {
            Ok(Ok(read)) => read,
            Ok(Err(message)) => return ToolOutput::error(message),
            Err(join) => return ToolOutput::error(format!("Read stopped unexpectedly: {join}")),
        };
        ctx.session.files.record(&path);
        match read {
            FileRead::Image { media_type, bytes } => ToolOutput {
                content: ToolResultContent::Blocks(vec![ToolResultBlock::Image {
                    source: ImageSource::Base64 {
                        media_type: media_type.to_string(),
                        data: base64::engine::general_purpose::STANDARD.encode(&bytes),
                    },
                }]),
                is_error: false,
                effect: None,
            },
            FileRead::Text(text) => ToolOutput::text(text),
        }
    }
}

/// What Read returns of a file it could read.
enum FileRead {
    Image {
        media_type: &'static str,
        bytes: Vec<u8>,
    },
    Text(String),
}

/// The lines a call asks for: `offset` (1-based) and how many.
#[derive(Debug, Clone, Copy)]
struct Window {
    offset: usize,
    limit: usize,
}

/// Opens `path` without waiting (`O_NONBLOCK`: a FIFO with no writer would otherwise block
/// the open for ever), refuses what is not a regular file by the opened file's own `fstat`,
/// and reads only what it returns: the first block to tell an image or a binary file, then
/// the lines of the window (each kept up to what is shown), scanning at most
/// [`MAX_SCAN_BYTES`].
fn read_file(path: &Path, window: Window) -> Result<FileRead, String> {
    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|errno| unreadable(path, &std::io::Error::from(errno)))?;
    let stat = rustix::fs::fstat(&fd).map_err(|errno| unreadable(path, &errno.into()))?;
    if let Some(refusal) = not_a_regular_file(path, FileType::from_raw_mode(stat.st_mode)) {
        return Err(refusal);
    }
    let len = u64::try_from(stat.st_size).unwrap_or(0);
    let mut file = File::from(fd);
    let head = read_up_to(&mut file, BINARY_SNIFF_BYTES).map_err(|err| unreadable(path, &err))?;
    if let Some(media_type) = image_media_type(&head) {
        if len > MAX_IMAGE_BYTES {
            return Err(image_too_large(path, len));
        }
        let mut bytes = head;
        (&mut file)
            .take(MAX_IMAGE_BYTES + 1 - bytes.len() as u64)
            .read_to_end(&mut bytes)
            .map_err(|err| unreadable(path, &err))?;
        if bytes.len() as u64 > MAX_IMAGE_BYTES {
            return Err(image_too_large(path, bytes.len() as u64));
        }
        return Ok(FileRead::Image { media_type, bytes });
    }
    if has_image_extension(path) && !head.is_empty() {
        return Err(format!(
            "{} has an image file name, but its content is not a PNG, JPEG, GIF or WebP \
             image, so it cannot be shown.",
            path.display()
        ));
    }
    if head.contains(&0) {
        return Err(format!(
            "{} looks like a binary file ({len} bytes); Read shows text files only.",
            path.display()
        ));
    }
    if head.is_empty() {
        return Ok(FileRead::Text(format!(
            "(the file {} is empty)",
            path.display()
        )));
    }
    if is_notebook(path) && len <= MAX_NOTEBOOK_BYTES {
        let mut bytes = head;
        (&mut file)
            .take(MAX_NOTEBOOK_BYTES + 1 - bytes.len() as u64)
            .read_to_end(&mut bytes)
            .map_err(|err| unreadable(path, &err))?;
        let text = String::from_utf8_lossy(&bytes);
        return Ok(FileRead::Text(match Notebook::parse(&text) {
            Ok(notebook) => notebook.render(&path.display().to_string()),
            Err(err) => {
                let lines = numbered_lines(&text, 1, DEFAULT_LINE_LIMIT);
                format!(
                    "({} cannot be shown as a notebook: {err}. Its text follows.)\n{lines}",
                    path.display()
                )
            }
        }));
    }
    let reader = BufReader::new(std::io::Cursor::new(head).chain(file));
    let lines = scan_lines(reader, window).map_err(|err| unreadable(path, &err))?;
    Ok(FileRead::Text(lines.render(window, path)))
}

/// Why Read refuses `path`, of type `kind`, when it is not a regular file; `None` for a
/// regular file. A pipe or a device may never end or wait for ever, so nothing is read.
fn not_a_regular_file(path: &Path, kind: FileType) -> Option<String> {
    let what = match kind {
        FileType::RegularFile => return None,
        FileType::Directory => return Some(is_a_directory(path)),
        FileType::Fifo => "a named pipe (FIFO)",
        FileType::Socket => "a socket",
        FileType::CharacterDevice => "a character device",
        FileType::BlockDevice => "a block device",
        FileType::Symlink | FileType::Unknown => "a special file",
    };
    Some(format!(
        "{} is {what}, not a regular file; Read reads regular files only (reading it could \
         wait for ever or never end).",
        path.display()
    ))
}

/// The kind of file `std` reports, as `fstat` names it.
fn kind_of(kind: std::fs::FileType) -> FileType {
    use std::os::unix::fs::FileTypeExt as _;
    if kind.is_file() {
        FileType::RegularFile
    } else if kind.is_dir() {
        FileType::Directory
    } else if kind.is_fifo() {
        FileType::Fifo
    } else if kind.is_socket() {
        FileType::Socket
    } else if kind.is_char_device() {
        FileType::CharacterDevice
    } else if kind.is_block_device() {
        FileType::BlockDevice
    } else {
        FileType::Unknown
    }
}

/// Up to `cap` bytes from the start of `file`, fewer at its end.
fn read_up_to(file: &mut File, cap: usize) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::with_capacity(cap);
    file.take(cap as u64).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// The lines of a window, as far as the scan went.
struct ScannedLines {
    /// `(number, text kept)`: a long line is kept up to [`MAX_LINE_BYTES`], more than is
    /// shown, so that [`numbered_line`] notes the cut.
    shown: Vec<(usize, String)>,
    /// Lines seen in all.
    seen: usize,
    /// The scan stopped at [`MAX_SCAN_BYTES`] before the end of the file.
    stopped_early: bool,
}

/// Reads lines from `reader`, keeping of each line in the window only what can be shown and
/// of the others nothing; counts lines past the window for the note, up to
/// [`MAX_SCAN_BYTES`] in all.
fn scan_lines(mut reader: impl BufRead, window: Window) -> std::io::Result<ScannedLines> {
    let first = window.offset;
    let last = window.offset.saturating_add(window.limit).saturating_sub(1);
    let mut out = ScannedLines {
        shown: Vec::new(),
        seen: 0,
        stopped_early: false,
    };
    let mut current: Vec<u8> = Vec::new();
    let mut in_line = false;
    let mut scanned: u64 = 0;
    loop {
        let chunk = reader.fill_buf()?;
        if chunk.is_empty() {
            break;
        }
        if scanned >= MAX_SCAN_BYTES {
            out.stopped_early = true;
            break;
        }
        let (piece, ends_line) = match chunk.iter().position(|&byte| byte == b'\n') {
            Some(at) => (&chunk[..at], true),
            None => (chunk, false),
        };
        let number = out.seen + 1;
        if (first..=last).contains(&number) {
            let room = MAX_LINE_BYTES.saturating_sub(current.len());
            current.extend_from_slice(&piece[..piece.len().min(room)]);
        }
        let used = piece.len() + usize::from(ends_line);
        in_line = !ends_line;
        reader.consume(used);
        scanned += used as u64;
        if ends_line {
            finish_line(&mut out, &mut current, first, last);
        }
    }
    if in_line {
        finish_line(&mut out, &mut current, first, last);
    }
    Ok(out)
}

fn finish_line(out: &mut ScannedLines, current: &mut Vec<u8>, first: usize, last: usize) {
    out.seen += 1;
    if (first..=last).contains(&out.seen) {
        let mut text = String::from_utf8_lossy(current).into_owned();
        if out.seen == 1 && text.starts_with('\u{feff}') {
            text.remove(0);
        }
        out.shown.push((out.seen, text));
    }
    current.clear();
}

impl ScannedLines {
    /// The window as `cat -n` prints it, with a note when more lines follow.
    fn render(&self, window: Window, path: &Path) -> String {
        let offset = window.offset;
        if self.shown.is_empty() {
            return if self.stopped_early {
                format!(
                    "(offset {offset} lies past the first {} MiB of {}, which is as far as \
                     Read scans; use Bash (for example `tail -n +{offset} FILE | head`) to \
                     read that far)",
                    MAX_SCAN_BYTES / (1024 * 1024),
                    path.display()
                )
            } else {
                format!(
                    "(the file has {} lines; offset {offset} is past its end)",
                    self.seen
                )
            };
        }
        let mut out = String::new();
        for (number, text) in &self.shown {
            out.push_str(&numbered_line(*number, text));
        }
        let last_shown = offset - 1 + self.shown.len();
        if self.stopped_early {
            out.push_str(&format!(
                "(showing lines {offset}-{last_shown}; the file goes on past the {} MiB Read \
                 scans; use offset and limit to read more)\n",
                MAX_SCAN_BYTES / (1024 * 1024)
            ));
        } else if last_shown < self.seen {
            out.push_str(&format!(
                "(showing lines {offset}-{last_shown} of {}; use offset and limit to read \
                 more)\n",
                self.seen
            ));
        }
        out
    }
}

/// What Read checks from the file's metadata alone, before it reads anything: the file
/// exists, is not a directory, and is not an image too large to return. Validation and
/// execution share it.
async fn check_readable(path: &Path) -> Result<(), String> {
    match tokio::fs::metadata(path).await {
        Ok(metadata) if !metadata.is_file() => {
            let kind = kind_of(metadata.file_type());
            Err(not_a_regular_file(path, kind).unwrap_or_else(|| is_a_directory(path)))
        }
        Ok(metadata) if has_image_extension(path) && metadata.len() > MAX_IMAGE_BYTES => {
            Err(image_too_large(path, metadata.len()))
        }
        Ok(_) => Ok(()),
        Err(err) => Err(unreadable(path, &err)),
    }
}

/// Why `path` could not be read, in words the model can act on.
fn unreadable(path: &Path, err: &std::io::Error) -> String {
    match err.kind() {
        ErrorKind::IsADirectory => is_a_directory(path),
        ErrorKind::NotFound => format!("File does not exist: {}", path.display()),
        _ => format!("Cannot read {}: {err}", path.display()),
    }
}

fn is_a_directory(path: &Path) -> String {
    format!(
        "{} is a directory, not a file. Use LS to list a directory.",
        path.display()
    )
}

fn has_image_extension(path: &Path) -> bool {
    path.extension()
        .and_then(|ext| ext.to_str())
        .is_some_and(|ext| {
            IMAGE_EXTENSIONS
                .iter()
                .any(|known| ext.eq_ignore_ascii_case(known))
        })
}

fn is_notebook(path: &Path) -> bool {
    path.extension()
        .is_some_and(|ext| ext.eq_ignore_ascii_case("ipynb"))
}

/// The media type of an image Read can return, by its magic bytes (whatever its name says).
fn image_media_type(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xff, 0xd8, 0xff]) {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && bytes.starts_with(b"RIFF") && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

fn image_too_large(path: &Path, len: u64) -> String {
    format!(
        "{} is an image of {:.1} MB; Read returns images up to {:.2} MB. Make a smaller copy \
         (for example `convert in.png -resize 50% out.png` with Bash) and read that.",
        path.display(),
        len as f64 / (1024.0 * 1024.0),
        MAX_IMAGE_BYTES as f64 / (1024.0 * 1024.0),
    )
}

/// Lines `offset..offset+limit` (1-based) as `cat -n` prints them, with a note when more
/// lines follow.
fn numbered_lines(text: &str, offset: usize, limit: usize) -> String {
    let total = text.lines().count();
    if offset > total {
        return format!("(the file has {total} lines; offset {offset} is past its end)");
    }
    let mut out = String::new();
    for (index, line) in text.lines().enumerate().skip(offset - 1).take(limit) {
        out.push_str(&numbered_line(index + 1, line));
    }
    let last_shown = (offset - 1 + limit).min(total);
    if last_shown < total {
        out.push_str(&format!(
            "(showing lines {offset}-{last_shown} of {total}; use offset and limit to read more)\n"
        ));
    }
    out
}

/// One line as `cat -n` prints it (number right-aligned in six columns, a tab, the line and a
/// newline), cut at 2000 characters. Edit's results show lines the same way.
pub(crate) fn numbered_line(number: usize, line: &str) -> String {
    let line = line.strip_suffix('\r').unwrap_or(line);
    let shown: String = line.chars().take(MAX_LINE_CHARS).collect();
    let mut out = format!("{number:>6}\t{shown}");
    if shown.len() < line.len() {
        out.push_str(" [line cut at 2000 characters]");
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::{Value, json};

    use super::*;
    use crate::input::parse_input;

    async fn read(dir: &std::path::Path, input: Value) -> ToolOutput {
        let input = match parse_input::<ReadInput>("Read", &input) {
            Ok(input) => input,
            Err(message) => return ToolOutput::error(message),
        };
        let ctx = ToolContext::new(dir.to_path_buf());
        ReadTool.run(input, &ctx, &CancellationToken::new()).await
    }

    #[tokio::test]
    async fn numbers_lines_and_strips_crlf_and_bom() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "\u{feff}one\r\ntwo\r\n").unwrap();
        let output = read(dir.path(), json!({"file_path": "a.txt"})).await;
        assert_eq!(output, ToolOutput::text("     1\tone\n     2\ttwo\n"));
    }

    #[tokio::test]
    async fn offset_and_limit_select_lines_and_say_what_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let text: String = (1..=10).map(|n| format!("line {n}\n")).collect();
        std::fs::write(dir.path().join("a.txt"), text).unwrap();
        let output = read(
            dir.path(),
            json!({"file_path": "a.txt", "offset": 3, "limit": 2}),
        )
        .await;
        assert_eq!(
            output,
            ToolOutput::text(
                "     3\tline 3\n     4\tline 4\n(showing lines 3-4 of 10; use offset and limit to read more)\n"
            )
        );
    }

    #[tokio::test]
    async fn refuses_binary_directories_and_missing_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("bin"), [0u8, 1, 2, 3]).unwrap();
        let binary = read(dir.path(), json!({"file_path": "bin"})).await;
        assert!(binary.is_error);
        assert!(binary.content.text().contains("binary file"), "{binary:?}");

        let directory = read(
            dir.path(),
            json!({"file_path": dir.path().to_str().unwrap()}),
        )
        .await;
        assert!(directory.is_error);
        assert!(directory.content.text().contains("Use LS"), "{directory:?}");

        let missing = read(dir.path(), json!({"file_path": "nope.txt"})).await;
        assert!(missing.is_error);
        assert!(
            missing.content.text().starts_with("File does not exist"),
            "{missing:?}"
        );
    }

    #[tokio::test]
    async fn empty_file_says_so_and_bad_input_names_the_field() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("empty"), "").unwrap();
        let empty = read(dir.path(), json!({"file_path": "empty"})).await;
        assert!(!empty.is_error);
        assert!(empty.content.text().contains("is empty"));

        let bad = read(dir.path(), json!({"path": "x"})).await;
        assert!(bad.is_error);
        assert!(bad.content.text().contains("file_path"), "{bad:?}");
    }

    #[test]
    fn long_lines_are_cut_with_a_note() {
        let long = "x".repeat(2500);
        let out = numbered_lines(&long, 1, 10);
        assert!(out.ends_with("[line cut at 2000 characters]\n"));
        assert_eq!(out.matches('x').count(), 2000);
    }
}
