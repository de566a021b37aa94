//! `Read` beyond plain text: images returned as images, notebooks cell by cell, binary files
//! refused.

#![allow(
    clippy::unwrap_used,
    reason = "test setup: a step that fails should fail the test at once"
)]

mod files_support;

use base64::Engine as _;
use cairn_protocol::{ImageSource, ToolResultBlock, ToolResultContent};
use cairn_tools::ToolOutput;
use files_support::Project;
use pretty_assertions::assert_eq;
use serde_json::json;

/// A valid 2×1 RGBA PNG (one red pixel, one transparent), built chunk by chunk.
fn tiny_png() -> Vec<u8> {
    fn crc32(bytes: &[u8]) -> u32 {
        let mut crc = 0xffff_ffffu32;
        for &byte in bytes {
            crc ^= u32::from(byte);
            for _ in 0..8 {
                crc = if crc & 1 == 1 {
                    (crc >> 1) ^ 0xedb8_8320
                } else {
                    crc >> 1
                };
            }
        }
        !crc
    }
    fn adler32(bytes: &[u8]) -> u32 {
        let (mut a, mut b) = (1u32, 0u32);
        for &byte in bytes {
            a = (a + u32::from(byte)) % 65521;
            b = (b + a) % 65521;
        }
        (b << 16) | a
    }
    fn chunk(kind: &[u8; 4], data: &[u8]) -> Vec<u8> {
        let mut out = (data.len() as u32).to_be_bytes().to_vec();
        let mut body = kind.to_vec();
        body.extend_from_slice(data);
        out.extend_from_slice(&body);
        out.extend_from_slice(&crc32(&body).to_be_bytes());
        out
    }
    let mut header = Vec::new();
    header.extend_from_slice(&2u32.to_be_bytes()); // width
    header.extend_from_slice(&1u32.to_be_bytes()); // height
    header.extend_from_slice(&[8, 6, 0, 0, 0]); // 8-bit RGBA, no interlace
    // One scanline: filter byte 0, then two RGBA pixels.
    let raw = [0u8, 255, 0, 0, 255, 0, 0, 0, 0];
    // zlib stream with one stored (uncompressed) block.
    let mut zlib = vec![0x78, 0x01, 0x01];
    zlib.extend_from_slice(&(raw.len() as u16).to_le_bytes());
    zlib.extend_from_slice(&(!(raw.len() as u16)).to_le_bytes());
    zlib.extend_from_slice(&raw);
    zlib.extend_from_slice(&adler32(&raw).to_be_bytes());

    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.extend(chunk(b"IHDR", &header));
    png.extend(chunk(b"IDAT", &zlib));
    png.extend(chunk(b"IEND", &[]));
    png
}

#[tokio::test]
async fn a_png_is_returned_as_an_image() {
    let project = Project::new();
    let png = tiny_png();
    project.put("dot.png", &png);

    let output = project.read("dot.png").await;

    assert_eq!(
        output,
        ToolOutput {
            content: ToolResultContent::Blocks(vec![ToolResultBlock::Image {
                source: ImageSource::Base64 {
                    media_type: "image/png".into(),
                    data: base64::engine::general_purpose::STANDARD.encode(&png),
                },
            }]),
            is_error: false,
            effect: None,
        }
    );
}

#[tokio::test]
async fn the_content_decides_the_image_type_not_the_name() {
    let project = Project::new();
    // A GIF saved with a .jpg name.
    let gif = b"GIF89a\x01\x00\x01\x00\x00\x00\x00;".to_vec();
    project.put("mislabelled.jpg", &gif);

    let output = project.read("mislabelled.jpg").await;

    let ToolResultContent::Blocks(blocks) = output.content else {
        panic!("expected an image, got {output:?}")
    };
    assert_eq!(
        blocks,
        vec![ToolResultBlock::Image {
            source: ImageSource::Base64 {
                media_type: "image/gif".into(),
                data: base64::engine::general_purpose::STANDARD.encode(&gif),
            },
        }]
    );
}

#[tokio::test]
async fn an_image_name_on_other_content_is_refused() {
    let project = Project::new();
    project.put("fake.png", "just text");

    let output = project
        .call("Read", json!({"file_path": project.arg("fake.png")}))
        .await;

    let path = project.arg("fake.png");
    assert_eq!(
        output,
        ToolOutput::error(format!(
            "{path} has an image file name, but its content is not a PNG, JPEG, GIF or WebP \
             image, so it cannot be shown."
        ))
    );
}

#[tokio::test]
async fn an_image_too_large_is_refused_with_a_way_out() {
    let project = Project::new();
    let mut big = tiny_png();
    big.resize(4 * 1024 * 1024, 0);
    project.put("big.png", &big);

    let output = project
        .call("Read", json!({"file_path": project.arg("big.png")}))
        .await;

    let path = project.arg("big.png");
    assert_eq!(
        output,
        ToolOutput::error(format!(
            "{path} is an image of 4.0 MB; Read returns images up to 3.75 MB. Make a smaller \
             copy (for example `convert in.png -resize 50% out.png` with Bash) and read that."
        ))
    );
}

#[tokio::test]
async fn a_binary_file_is_refused() {
    let project = Project::new();
    project.put("data.bin", [0x7fu8, b'E', b'L', b'F', 0, 0, 1]);

    let output = project
        .call("Read", json!({"file_path": project.arg("data.bin")}))
        .await;

    let path = project.arg("data.bin");
    assert_eq!(
        output,
        ToolOutput::error(format!(
            "{path} looks like a binary file (7 bytes); Read shows text files only."
        ))
    );
}

#[tokio::test]
async fn a_notebook_is_shown_cell_by_cell_with_outputs() {
    let project = Project::new();
    let fixture = include_str!("fixtures/files/analysis.ipynb");
    project.put("analysis.ipynb", fixture);

    let output = project.read("analysis.ipynb").await;

    let path = project.arg("analysis.ipynb");
    let expected = format!(
        "Jupyter notebook {path}: 4 cells, language python. Change cells with NotebookEdit, \
         naming a cell by its id (or its 0-based index).

<cell index=\"0\" id=\"intro\" type=\"markdown\">
# Sales analysis
Numbers in €.
</cell>

<cell index=\"1\" id=\"load\" type=\"code\" execution_count=\"1\">
rows = [3, 5, 8]
print(f\"loaded {{len(rows)}} rows\")
<output type=\"stream\" name=\"stdout\">
loaded 3 rows
</output>
</cell>

<cell index=\"2\" id=\"plot\" type=\"code\" execution_count=\"2\">
total = sum(rows)
plot(rows)
total
<output type=\"execute_result\">
16
</output>
<output type=\"display_data\">
<Figure size 640x480 with 1 Axes>
[image/png image, not shown]
</output>
</cell>

<cell index=\"3\" id=\"oops\" type=\"code\" execution_count=\"3\">
total / 0
<output type=\"error\">
ZeroDivisionError: division by zero
</output>
</cell>
"
    );
    assert_eq!(output, ToolOutput::text(expected));
}

#[tokio::test]
async fn a_broken_notebook_is_shown_as_text_with_a_note() {
    let project = Project::new();
    project.put("broken.ipynb", "{\"cells\": [\n");

    let output = project.read("broken.ipynb").await;

    let path = project.arg("broken.ipynb");
    assert_eq!(
        output,
        ToolOutput::text(format!(
            "({path} cannot be shown as a notebook: it is not valid JSON (EOF while parsing a \
             list at line 2 column 0). Its text follows.)\n     1\t{{\"cells\": [\n"
        ))
    );
}

/// The peak resident memory of this process so far, in KiB (`VmHWM`).
fn peak_memory_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// Runs a Read, failing the test instead of hanging when the Read never returns.
async fn read_promptly(project: &Project, path: &str) -> ToolOutput {
    tokio::time::timeout(
        std::time::Duration::from_secs(20),
        project.call("Read", json!({"file_path": path})),
    )
    .await
    .unwrap_or_else(|_| panic!("Read of {path} did not return"))
}

#[tokio::test]
async fn special_files_are_refused_at_once_without_reading_them() {
    let project = Project::new();
    let fifo = project.path("pipe");
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
    )
    .unwrap();
    let socket = project.path("sock");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    // A pipe with a writer that never writes nor closes: reading it would wait for ever.
    let (pipe_reader, _pipe_writer) = std::io::pipe().unwrap();
    let pipe_path = format!(
        "/proc/self/fd/{}",
        std::os::fd::AsRawFd::as_raw_fd(&pipe_reader)
    );
    let cases = [
        (project.arg("pipe"), "a named pipe (FIFO)"),
        (project.arg("sock"), "a socket"),
        ("/dev/zero".to_string(), "a character device"),
        ("/dev/null".to_string(), "a character device"),
        (pipe_path, "a named pipe (FIFO)"),
    ];
    for (path, what) in cases {
        let expected = ToolOutput::error(format!(
            "{path} is {what}, not a regular file; Read reads regular files only (reading it \
             could wait for ever or never end)."
        ));
        assert_eq!(read_promptly(&project, &path).await, expected, "{path}");
        assert_eq!(
            project.validate("Read", json!({"file_path": path})).await,
            Err(expected),
            "{path}"
        );
    }
}

#[tokio::test]
async fn a_huge_sparse_file_is_answered_with_bounded_memory() {
    const HUGE: u64 = 2 << 30;
    let project = Project::new();
    // All zeros: binary, told from the first block.
    let zeros = std::fs::File::create(project.path("zeros.img")).unwrap();
    zeros.set_len(HUGE).unwrap();
    // Text lines, then zeros with no newline: one endless line after the text.
    let lines: String = (1..=3).map(|n| format!("line {n}\n")).collect();
    let padded = format!("{lines}{}\n", "x".repeat(9000));
    project.put("log.txt", &padded);
    std::fs::OpenOptions::new()
        .write(true)
        .open(project.path("log.txt"))
        .unwrap()
        .set_len(HUGE)
        .unwrap();

    let before = peak_memory_kib();
    let binary = read_promptly(&project, &project.arg("zeros.img")).await;
    let text = read_promptly(&project, &project.arg("log.txt")).await;
    let grown_kib = peak_memory_kib().saturating_sub(before);

    assert_eq!(
        binary,
        ToolOutput::error(format!(
            "{} looks like a binary file ({HUGE} bytes); Read shows text files only.",
            project.arg("zeros.img")
        ))
    );
    assert!(!text.is_error, "{text:?}");
    let shown = text.content.text();
    let numbered: Vec<&str> = shown
        .lines()
        .map(|line| &line[..line.len().min(12)])
        .collect();
    assert_eq!(
        numbered,
        vec![
            "     1\tline ",
            "     2\tline ",
            "     3\tline ",
            "     4\txxxxx",
            "     5\t\0\0\0\0\0",
            "(showing lin",
        ]
    );
    assert!(
        shown.contains("[line cut at 2000 characters]"),
        "{shown:.200}"
    );
    assert!(shown.ends_with("(showing lines 1-5; the file goes on past the 64 MiB Read scans; use offset and limit to read more)\n"), "{}", &shown[shown.len() - 200..]);
    assert!(
        grown_kib < 64 * 1024,
        "reading a 2 GiB file raised the peak memory by {grown_kib} KiB"
    );
}

#[tokio::test]
async fn a_window_far_into_a_file_shows_only_its_lines() {
    let project = Project::new();
    let text: String = (1..=50_000).map(|n| format!("row {n}\n")).collect();
    project.put("rows.txt", &text);
    let output = project
        .call(
            "Read",
            json!({"file_path": project.arg("rows.txt"), "offset": 49_999, "limit": 5}),
        )
        .await;
    assert_eq!(
        output,
        ToolOutput::text(" 49999\trow 49999\n 50000\trow 50000\n")
    );
    let past = project
        .call(
            "Read",
            json!({"file_path": project.arg("rows.txt"), "offset": 60_000}),
        )
        .await;
    assert_eq!(
        past,
        ToolOutput::text("(the file has 50000 lines; offset 60000 is past its end)")
    );
}
