//! One tool call in the transcript, compact: a header with the tool and its key argument
//! (`● Read(src/main.rs)`) and, once it has run, one line saying what came of it
//! (`⎿ Read 120 lines`), or the diff of an edit, the tail of a command's output, the checklist
//! of a todo update. In full detail (the transcript view) the summary is followed by the whole
//! result: all of a command's output, the lines read, the matches, the whole diff.

use std::path::Path;

use cairn_protocol::TodoItem;
use ratatui::text::{Line, Span};
use serde_json::Value;

use crate::diff::{DiffStats, render_diff_from};
use crate::sub_agent::SubAgentProgress;
use crate::theme::Theme;
use crate::todos::render_todos;
use crate::wrap::{Prefix, sanitize, text_width, truncate, wrap_words};

/// Diff lines shown for one edit before the rest is summed up.
const MAX_DIFF_LINES: usize = 40;
/// The last lines of a command's output shown under it.
const OUTPUT_TAIL_LINES: usize = 5;
/// Columns before a tool's result: `  ⎿ `.
const RESULT_INDENT: usize = 4;
/// The most result lines shown in full detail; a longer result ends with how many are left.
const FULL_LINES: usize = 2_000;

/// How much of a tool call is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Detail {
    /// The summary line, a capped diff, the tail of a command's output.
    Compact,
    /// The summary and the whole result (up to [`FULL_LINES`]), with the input of tools that
    /// have no summary of their own.
    Full,
}

/// A tool call as the transcript knows it: its input once complete, its result once run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolCall {
    pub id: String,
    pub name: String,
    pub input: Option<Value>,
    pub result: Option<ToolOutcome>,
    /// The file a Write replaces, as it was before the call (`None`: a new file, or unknown).
    pub file_before: Option<String>,
    /// A permission dialog asks about this call and the user has not answered yet.
    pub awaiting_approval: bool,
    /// What the sub-agent an `Agent` call started has done, once it sent an event (boxed:
    /// most calls start none).
    pub sub_agent: Option<Box<SubAgentProgress>>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolOutcome {
    pub text: String,
    pub is_error: bool,
}

/// The argument that says what a call is about: the file for `Read`, `Edit` and `Write`, the
/// command (its first line) for `Bash`, the pattern for `Grep` and `Glob`, the directory for
/// `LS`; for other tools the first string argument, if any. It is one line: the lines of a
/// multi-line argument are joined with ` ⏎ `, so they never run into each other.
///
/// ```
/// use cairn_tui::key_argument;
/// use serde_json::json;
///
/// let input = json!({"command": "cargo test\n--workspace", "timeout": 600});
/// assert_eq!(key_argument("Bash", &input).as_deref(), Some("cargo test …"));
/// let input = json!({"note": "Bump the port to 20002.\nUpdate the docs"});
/// assert_eq!(
///     key_argument("mcp__notes__add", &input).as_deref(),
///     Some("Bump the port to 20002. ⏎ Update the docs")
/// );
/// ```
pub fn key_argument(tool: &str, input: &Value) -> Option<String> {
    argument_of(tool, input).map(|argument| one_line(&argument))
}

/// `text`'s lines, each trimmed, the empty ones left out, joined with ` ⏎ `.
fn one_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join(" ⏎ ")
}

fn argument_of(tool: &str, input: &Value) -> Option<String> {
    let field = |name: &str| input.get(name).and_then(Value::as_str).map(str::to_string);
    match tool {
        "Read" | "Edit" | "MultiEdit" | "Write" => field("file_path"),
        "NotebookEdit" => field("notebook_path"),
        "Bash" => field("command").map(|command| {
            let mut lines = command.trim().lines();
            let first = lines.next().unwrap_or_default().to_string();
            if lines.next().is_some() {
                format!("{first} …")
            } else {
                first
            }
        }),
        "Grep" => field("pattern").map(|pattern| match field("path") {
            Some(path) => format!("{pattern} in {path}"),
            None => pattern,
        }),
        "Glob" => field("pattern"),
        "LS" => field("path"),
        "WebFetch" => field("url"),
        "WebSearch" => field("query"),
        "Agent" | "Task" => field("description"),
        "Skill" => field("skill").or_else(|| field("command")),
        "BashOutput" => field("bash_id"),
        "KillShell" => field("shell_id"),
        "TodoWrite" => None,
        _ => input
            .as_object()
            .and_then(|object| object.values().find_map(Value::as_str))
            .map(str::to_string),
    }
}

/// `mcp__server__tool` as `server:tool`, `TodoWrite` as what it does, any other tool's name as
/// it is.
fn display_name(tool: &str) -> String {
    match tool
        .strip_prefix("mcp__")
        .and_then(|rest| rest.split_once("__"))
    {
        Some((server, name)) => format!("{server}:{name}"),
        None if tool == "TodoWrite" => "Update Todos".to_string(),
        None => tool.to_string(),
    }
}

/// `path` relative to `cwd` when it lies inside it.
fn shorten_path(path: &str, cwd: Option<&Path>) -> String {
    cwd.and_then(|cwd| Path::new(path).strip_prefix(cwd).ok())
        .filter(|relative| !relative.as_os_str().is_empty())
        .map_or_else(
            || path.to_string(),
            |relative| relative.display().to_string(),
        )
}

/// What a call that has not answered yet says it is doing: the web tools name their search
/// or page, the others are running.
fn running_note(call: &ToolCall) -> String {
    let field = |name: &str| {
        call.input
            .as_ref()
            .and_then(|input| input.get(name))
            .and_then(Value::as_str)
            .map(one_line)
    };
    match call.name.as_str() {
        "WebSearch" => field("query").map(|query| format!("Searching: {query}…")),
        "WebFetch" => field("url").map(|url| format!("Fetching: {url}…")),
        _ => None,
    }
    .unwrap_or_else(|| "Running…".to_string())
}

pub(crate) fn render_tool_call_with(
    call: &ToolCall,
    width: u16,
    theme: &Theme,
    cwd: Option<&Path>,
    detail: Detail,
) -> Vec<Line<'static>> {
    let width = usize::from(width);
    let mut lines = vec![header(call, width, theme, cwd)];
    let body_width = width.saturating_sub(RESULT_INDENT).max(1);
    let mut body = Vec::new();
    // The header cuts a long command to one line; the full view shows all of it.
    if detail == Detail::Full
        && call.name == "Bash"
        && let Some(command) = call
            .input
            .as_ref()
            .and_then(|input| input.get("command"))
            .and_then(Value::as_str)
    {
        for line in sanitize(command).lines() {
            body.extend(wrap_words(
                &[Span::styled(format!("$ {line}"), theme.dim)],
                body_width,
                &Prefix::none(),
            ));
        }
    }
    // The input of a tool without a view of its own, and of any call not run yet (its
    // diff or result is not there to show what it will do).
    if detail == Detail::Full
        && let Some(input) = &call.input
        && (!has_own_view(&call.name) || call.result.is_none())
        && call.name != "Bash"
    {
        let input = sanitize(&input.to_string());
        body.extend(wrap_words(
            &[Span::styled(format!("Input: {input}"), theme.dim)],
            body_width,
            &Prefix::none(),
        ));
    }
    match (&call.result, detail) {
        (None, _) if call.awaiting_approval => body.push(Line::from(Span::styled(
            "Waiting for approval…",
            theme.warning,
        ))),
        (None, _) => match &call.sub_agent {
            Some(progress) => body.extend(progress.running_lines(body_width, theme, cwd)),
            None => body.push(Line::from(Span::styled(running_note(call), theme.dim))),
        },
        // A sub-agent's answer is for the model; the cell sums up what the run took.
        (Some(outcome), Detail::Compact) if ended_sub_agent(call).is_some() => {
            if outcome.is_error {
                body.extend(result_body(call, outcome, body_width, theme, cwd, 0));
            }
            let summary = ended_sub_agent(call).map(SubAgentProgress::summary);
            body.extend(summary_lines(
                vec![Span::styled(summary.unwrap_or_default(), theme.dim)],
                body_width,
            ));
        }
        (Some(outcome), Detail::Compact) => {
            body.extend(result_body(
                call,
                outcome,
                body_width,
                theme,
                cwd,
                MAX_DIFF_LINES,
            ));
        }
        (Some(outcome), Detail::Full) => {
            body.extend(full_body(call, outcome, body_width, theme, cwd))
        }
    }
    for (index, line) in body.into_iter().enumerate() {
        let lead = if index == 0 {
            Span::styled("  ⎿ ", theme.dim)
        } else {
            Span::raw(" ".repeat(RESULT_INDENT))
        };
        let mut spans = vec![lead];
        spans.extend(line.spans);
        lines.push(Line::from(spans));
    }
    lines
}

/// The key argument as a cell's header shows it: a path inside `cwd` relative to it.
pub(crate) fn shown_argument(tool: &str, input: &Value, cwd: Option<&Path>) -> Option<String> {
    let argument = key_argument(tool, input)?;
    Some(match tool {
        "Read" | "Edit" | "MultiEdit" | "Write" | "NotebookEdit" | "LS" => {
            shorten_path(&argument, cwd)
        }
        _ => argument,
    })
}

/// The progress of the sub-agent a finished `Agent` call ran, when its cell saw it end.
fn ended_sub_agent(call: &ToolCall) -> Option<&SubAgentProgress> {
    call.sub_agent
        .as_deref()
        .filter(|progress| progress.has_ended())
}

fn header(call: &ToolCall, width: usize, theme: &Theme, cwd: Option<&Path>) -> Line<'static> {
    let dot = match &call.result {
        None => theme.tool_pending,
        Some(outcome) if outcome.is_error => theme.error,
        Some(_) => theme.success,
    };
    let name = display_name(&call.name);
    let mut spans = vec![
        Span::styled("● ", dot),
        Span::styled(sanitize(&name), theme.tool_name),
    ];
    let argument = call
        .input
        .as_ref()
        .and_then(|input| shown_argument(&call.name, input, cwd));
    if let Some(argument) = argument {
        let room = width.saturating_sub(2 + text_width(&name) + 2).max(1);
        spans.push(Span::raw(format!(
            "({})",
            truncate(&sanitize(&argument), room)
        )));
    }
    Line::from(spans)
}

/// Tools whose result view already shows what their input says (the command, the diff, the
/// checklist): their input is not repeated in full detail.
fn has_own_view(tool: &str) -> bool {
    matches!(
        tool,
        "Bash" | "Read" | "Edit" | "MultiEdit" | "Write" | "TodoWrite" | "Grep" | "Glob" | "LS"
    )
}

/// The whole result: diffs and checklists uncapped; for a command its whole output; for
/// anything else the summary line, then every line of the result.
fn full_body(
    call: &ToolCall,
    outcome: &ToolOutcome,
    width: usize,
    theme: &Theme,
    cwd: Option<&Path>,
) -> Vec<Line<'static>> {
    let text = sanitize(&outcome.text);
    if call.name == "Bash" {
        return bash_output(&text, outcome.is_error, width, theme, FULL_LINES, true);
    }
    if !outcome.is_error
        && matches!(
            call.name.as_str(),
            "Edit" | "MultiEdit" | "Write" | "TodoWrite"
        )
    {
        return result_body(call, outcome, width, theme, cwd, FULL_LINES);
    }
    // An error is its whole text below; anything else has its summary first.
    let mut lines = if outcome.is_error {
        Vec::new()
    } else {
        result_body(call, outcome, width, theme, cwd, FULL_LINES)
    };
    let style = if outcome.is_error {
        theme.error
    } else {
        theme.dim
    };
    let mut shown = 0;
    let all: Vec<&str> = text.lines().collect();
    for line in &all {
        if shown >= FULL_LINES {
            break;
        }
        let wrapped = wrap_words(
            &[Span::styled(line.to_string(), style)],
            width,
            &Prefix::none(),
        );
        shown += 1;
        if wrapped.is_empty() {
            lines.push(Line::default());
        }
        lines.extend(wrapped);
    }
    if all.len() > shown {
        lines.push(Line::from(Span::styled(
            format!("… +{}", plural(all.len() - shown, "line")),
            theme.dim,
        )));
    }
    lines
}

fn result_body(
    call: &ToolCall,
    outcome: &ToolOutcome,
    width: usize,
    theme: &Theme,
    cwd: Option<&Path>,
    diff_cap: usize,
) -> Vec<Line<'static>> {
    // Tabs matter to the `cat -n` format, so numbered lines are read before cleaning up.
    let raw = outcome.text.as_str();
    let text = sanitize(raw);
    let input = call.input.as_ref().unwrap_or(&Value::Null);
    let str_field = |name: &str| input.get(name).and_then(Value::as_str).unwrap_or_default();
    if call.name == "Bash" {
        return bash_output(
            &text,
            outcome.is_error,
            width,
            theme,
            OUTPUT_TAIL_LINES,
            false,
        );
    }
    if outcome.is_error {
        let first = text.lines().find(|line| !line.trim().is_empty());
        let first = first.unwrap_or("Failed").trim();
        return wrap_words(
            &[Span::styled(first.to_string(), theme.error)],
            width,
            &Prefix::none(),
        );
    }
    let path = shorten_path(str_field("file_path"), cwd);
    match call.name.as_str() {
        "Read" => {
            let count = raw.lines().filter(|line| is_numbered(line)).count();
            let extension = Path::new(str_field("file_path"))
                .extension()
                .and_then(|extension| extension.to_str())
                .map(str::to_ascii_lowercase);
            let image = matches!(
                extension.as_deref(),
                Some("png" | "jpg" | "jpeg" | "gif" | "webp")
            );
            let summary = if count == 0 && image {
                // The image itself went to the model; its text part is empty.
                format!("Read image ({})", extension.unwrap_or_default())
            } else if count == 0 && !text.trim().is_empty() {
                first_line(&text)
            } else {
                format!("Read {}", plural(count, "line"))
            };
            summary_lines(vec![Span::raw(summary)], width)
        }
        "Edit" => {
            let (old, new) = (str_field("old_string"), str_field("new_string"));
            let stats = DiffStats::between(old, new);
            let start = snippet_start_line(raw, new).unwrap_or(1);
            let mut lines = summary_lines(updated_summary(&path, stats), width);
            lines.extend(capped(
                render_diff_from(old, new, start, clamp(width), theme),
                diff_cap,
                theme,
            ));
            lines
        }
        "MultiEdit" => {
            let edits = input.get("edits").and_then(Value::as_array);
            let edits: Vec<(&str, &str)> = edits
                .into_iter()
                .flatten()
                .map(|edit| {
                    let field = |name| edit.get(name).and_then(Value::as_str).unwrap_or_default();
                    (field("old_string"), field("new_string"))
                })
                .collect();
            let mut stats = DiffStats::default();
            let mut diff = Vec::new();
            for (index, (old, new)) in edits.iter().enumerate() {
                let one = DiffStats::between(old, new);
                stats.added += one.added;
                stats.removed += one.removed;
                if index > 0 {
                    diff.push(Line::from(Span::styled("⋮", theme.diff_gutter)));
                }
                let start = snippet_start_line(raw, new).unwrap_or(1);
                diff.extend(render_diff_from(old, new, start, clamp(width), theme));
            }
            let mut lines = summary_lines(updated_summary(&path, stats), width);
            lines.extend(capped(diff, diff_cap, theme));
            lines
        }
        "Write" => {
            let content = str_field("content");
            let (summary, before) = match call.file_before.as_deref() {
                // Replacing a file: what it added and removed, as for an edit.
                Some(before) => (
                    updated_summary(&path, DiffStats::between(before, content)),
                    before,
                ),
                None => {
                    let count = DiffStats::between("", content).added;
                    let summary = format!("Wrote {} to {path}", plural(count, "line"));
                    (vec![Span::raw(summary)], "")
                }
            };
            let mut lines = summary_lines(summary, width);
            lines.extend(capped(
                render_diff_from(before, content, 1, clamp(width), theme),
                diff_cap,
                theme,
            ));
            lines
        }
        "TodoWrite" => {
            match serde_json::from_value::<Vec<TodoItem>>(
                input.get("todos").cloned().unwrap_or(Value::Null),
            ) {
                Ok(todos) => render_todos(&todos, clamp(width), theme),
                Err(_) => vec![Line::from(first_line(&text))],
            }
        }
        "Grep" => {
            let summary = grep_summary(&text, str_field("output_mode"));
            summary_lines(vec![Span::raw(summary)], width)
        }
        "Glob" => {
            let summary = count_summary(&text, "No files found", "Found", "file");
            summary_lines(vec![Span::raw(summary)], width)
        }
        "LS" => {
            let entries = text
                .lines()
                .filter(|line| line.trim_start().starts_with("- "));
            let count = entries.count().saturating_sub(1);
            let summary = format!("Listed {}", plural(count, "path"));
            summary_lines(vec![Span::raw(summary)], width)
        }
        _ => generic_body(&text, width, theme),
    }
}

fn summary_lines(spans: Vec<Span<'static>>, width: usize) -> Vec<Line<'static>> {
    wrap_words(&spans, width, &Prefix::none())
}

fn clamp(width: usize) -> u16 {
    u16::try_from(width).unwrap_or(u16::MAX)
}

/// A command's result: how it failed, in red, then the last `tail` lines of its output, each
/// cut to the width, or wrapped with `wrap`.
fn bash_output(
    text: &str,
    is_error: bool,
    width: usize,
    theme: &Theme,
    tail: usize,
    wrap: bool,
) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    let mut output: Vec<&str> = text.lines().collect();
    if is_error {
        let failure = output
            .iter()
            .position(|line| {
                [
                    "Exit code ",
                    "Killed by signal",
                    "Command timed out",
                    "Command was interrupted",
                ]
                .iter()
                .any(|start| line.starts_with(start))
            })
            .unwrap_or(0);
        if let Some(line) = (!output.is_empty()).then(|| output.remove(failure)) {
            let line = line.trim_end_matches("Output until then:").trim();
            lines.extend(wrap_words(
                &[Span::styled(line.to_string(), theme.error)],
                width,
                &Prefix::none(),
            ));
        }
    }
    // Empty lines say nothing in a five-line tail. The note of an output cut in the middle
    // goes too; the lines it stands for count as hidden.
    let mut cut = 0;
    output.retain(|line| {
        if let Some(lines) = middle_cut_lines(line) {
            cut += lines;
            return false;
        }
        !line.trim().is_empty()
    });
    if output.is_empty() || output == ["(no output)"] {
        if lines.is_empty() {
            lines.push(Line::from(Span::styled("(no output)", theme.dim)));
        }
        return lines;
    }
    let hidden = output.len().saturating_sub(tail);
    if hidden + cut > 0 {
        let note = if cut > 0 {
            " (the model got the start and the end)"
        } else {
            ""
        };
        lines.push(Line::from(Span::styled(
            format!("… +{}{note}", plural(hidden + cut, "line")),
            theme.dim,
        )));
    }
    for line in &output[hidden..] {
        if wrap {
            lines.extend(wrap_words(
                &[Span::raw(line.to_string())],
                width,
                &Prefix::none(),
            ));
        } else {
            lines.push(Line::from(truncate(line, width)));
        }
    }
    lines
}

/// How many lines the Bash tool's note `[… output too long: N characters (M lines) cut from
/// the middle …]` stands for.
fn middle_cut_lines(line: &str) -> Option<usize> {
    let rest = line.trim().strip_prefix("[… output too long: ")?;
    if !rest.ends_with("cut from the middle …]") {
        return None;
    }
    let (_, rest) = rest.split_once('(')?;
    let (lines, _) = rest.split_once(" line")?;
    lines.parse().ok()
}

/// The first line of a result, and how many more there are.
fn generic_body(text: &str, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let total = text.lines().filter(|line| !line.trim().is_empty()).count();
    if total == 0 {
        return vec![Line::from(Span::styled("(no output)", theme.dim))];
    }
    let first = first_line(text);
    let more = (total > 1).then(|| format!(" … +{}", plural(total - 1, "line")));
    let room = width.saturating_sub(more.as_deref().map_or(0, text_width));
    let mut spans = vec![Span::raw(truncate(&first, room))];
    if let Some(more) = more {
        spans.push(Span::styled(more, theme.dim));
    }
    vec![Line::from(spans)]
}

fn capped(mut lines: Vec<Line<'static>>, cap: usize, theme: &Theme) -> Vec<Line<'static>> {
    if lines.len() > cap {
        let hidden = lines.len() - cap;
        lines.truncate(cap);
        lines.push(Line::from(Span::styled(
            format!("… +{}", plural(hidden, "line")),
            theme.dim,
        )));
    }
    lines
}

fn updated_summary(path: &str, stats: DiffStats) -> Vec<Span<'static>> {
    let mut spans = vec![Span::raw(format!("Updated {path}"))];
    let mut parts = Vec::new();
    if stats.added > 0 {
        parts.push(plural(stats.added, "addition"));
    }
    if stats.removed > 0 {
        parts.push(plural(stats.removed, "removal"));
    }
    if !parts.is_empty() {
        spans.push(Span::raw(format!(" with {}", parts.join(" and "))));
    }
    spans
}

/// `Found 3 files`, `3 matches in 2 files` or `No matches`, from Grep's output in its mode.
fn grep_summary(text: &str, mode: &str) -> String {
    let listing: Vec<&str> = text
        .lines()
        .take_while(|line| !line.starts_with("[Showing"))
        .filter(|line| !line.trim().is_empty() && *line != "--")
        .collect();
    if listing.is_empty() || text.trim() == "No matches found" {
        return "No matches".to_string();
    }
    match mode {
        "content" => {
            let mut files = Vec::new();
            let mut matches = 0;
            for line in &listing {
                // Matching lines are `path:line:text`; context lines use `-` instead.
                let mut parts = line.splitn(3, ':');
                let (Some(path), Some(number)) = (parts.next(), parts.next()) else {
                    continue;
                };
                if !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()) {
                    matches += 1;
                    if !files.contains(&path) {
                        files.push(path);
                    }
                }
            }
            if matches == 0 {
                return format!("Found {}", plural(listing.len(), "line"));
            }
            format!(
                "{} in {}",
                plural(matches, "match"),
                plural(files.len(), "file")
            )
        }
        "count" => {
            let counts = listing.iter().filter_map(|line| {
                let (_, count) = line.rsplit_once(':')?;
                count.trim().parse::<usize>().ok()
            });
            let (files, matches) = counts.fold((0, 0), |(files, sum), n| (files + 1, sum + n));
            format!("{} in {}", plural(matches, "match"), plural(files, "file"))
        }
        _ => format!("Found {}", plural(listing.len(), "file")),
    }
}

fn count_summary(text: &str, nothing: &str, verb: &str, noun: &str) -> String {
    if text.trim() == nothing {
        return nothing.to_string();
    }
    let count = text
        .lines()
        .filter(|line| !line.trim().is_empty() && !line.starts_with(['(', '[']))
        .count();
    format!("{verb} {}", plural(count, noun))
}

/// A line of `cat -n` output: spaces, a number, a tab.
fn is_numbered(line: &str) -> bool {
    line.trim_start()
        .split_once(['\t', '→'])
        .is_some_and(|(number, _)| !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()))
}

/// Where an edit's new text starts in the file, read from the numbered snippet that Edit
/// returns: the number of the first line whose text is the new text's first line.
fn snippet_start_line(result: &str, new_string: &str) -> Option<usize> {
    let first = new_string
        .lines()
        .next()
        .filter(|line| !line.trim().is_empty())?;
    let numbered: Vec<(usize, &str)> = result
        .lines()
        .filter_map(|line| {
            let (number, text) = line.trim_start().split_once('\t')?;
            Some((number.parse().ok()?, text))
        })
        .collect();
    // The whole line, else a line holding it (an edit of part of an indented line).
    numbered
        .iter()
        .find(|(_, text)| *text == first)
        .or_else(|| numbered.iter().find(|(_, text)| text.contains(first)))
        .map(|(number, _)| *number)
}

fn first_line(text: &str) -> String {
    text.lines()
        .find(|line| !line.trim().is_empty())
        .unwrap_or_default()
        .trim()
        .to_string()
}

fn plural(count: usize, noun: &str) -> String {
    match (count, noun) {
        (1, _) => format!("1 {noun}"),
        (_, "match") => format!("{count} matches"),
        _ => format!("{count} {noun}s"),
    }
}

#[cfg(test)]
#[path = "tool_cell_tests.rs"]
mod tests;
