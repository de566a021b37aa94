//! Markdown to terminal lines: what the model writes, rendered as it streams.
//!
//! The text is parsed again whole on every call, which keeps streaming simple: an unfinished
//! message is just shorter Markdown. pulldown-cmark closes what is still open at the end of the
//! input, so an unclosed code fence renders as code so far and a half-written list as a list.

use pulldown_cmark::{Alignment, CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use crate::highlight::highlight_code;
use crate::table::render_table;
use crate::theme::Theme;
use crate::wrap::{Prefix, sanitize, spans_width, text_width, wrap_chars, wrap_words};

mod pieces;

pub(crate) use pieces::{GrowingMarkdown, MarkdownPieces};

/// Renders `source` as lines at most `width` columns wide (wider only where a single character
/// cannot fit), with headings, emphasis, lists, quotes, tables, links and highlighted code.
///
/// ```
/// use cairn_tui::{Theme, render_markdown};
///
/// let lines = render_markdown("# Title\n\n- one\n- two", 40, &Theme::plain());
/// let text: Vec<String> = lines.iter().map(|line| line.to_string()).collect();
/// assert_eq!(text, ["Title", "", "• one", "• two"]);
/// ```
pub fn render_markdown(source: &str, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    render_events(&sanitize(source), Follows::Nothing, width, theme)
}

/// Renders `source` as the rest of a text whose earlier top-level blocks were rendered before
/// (its start is a block's): its first block is set off from them by an empty line, as in the
/// whole.
pub(crate) fn render_markdown_after(source: &str, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    render_events(&sanitize(source), Follows::Lines, width, theme)
}

/// The Markdown extensions the model's text is read with.
fn parser_options() -> Options {
    Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS
}

/// Renders already sanitized `source`, as the whole text or as a piece that `follows` others.
fn render_events(source: &str, follows: Follows, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let events: Vec<Event<'_>> = Parser::new_ext(source, parser_options()).collect();
    let spacings = list_spacings(&events);
    let mut renderer = Renderer::new(theme, usize::from(width), follows, spacings);
    for event in events {
        renderer.event(event);
    }
    renderer.finish()
}

/// How each list in `events` is spaced, in the order the lists start. pulldown-cmark wraps the
/// text of a loose list's items in paragraphs and leaves a tight list's bare, so a list is
/// loose when one of its items holds a paragraph directly.
fn list_spacings<'e, 'a: 'e>(events: impl IntoIterator<Item = &'e Event<'a>>) -> Vec<Spacing> {
    enum Open {
        /// A list, by its place in `spacings`.
        List(usize),
        Item,
        Other,
    }
    let mut spacings = Vec::new();
    let mut open = Vec::new();
    for event in events {
        match event {
            Event::Start(Tag::List(_)) => {
                open.push(Open::List(spacings.len()));
                spacings.push(Spacing::Tight);
            }
            Event::Start(Tag::Item) => open.push(Open::Item),
            Event::Start(tag) => {
                if let (Tag::Paragraph, [.., Open::List(list), Open::Item]) = (tag, &open[..]) {
                    spacings[*list] = Spacing::Loose;
                }
                open.push(Open::Other);
            }
            Event::End(_) => {
                open.pop();
            }
            _ => {}
        }
    }
    spacings
}

/// What comes before the text a [`Renderer`] renders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Follows {
    /// Nothing: the text is a whole, or its pieces so far rendered no line.
    Nothing,
    /// Lines of earlier pieces of the text, ending with a block: the first block is set off
    /// by an empty line, as in the whole.
    Lines,
}

/// A block that puts something before each of the lines inside it.
enum Container {
    Quote,
    /// A list item: its marker goes before its first line, spaces before the rest.
    Item {
        marker: String,
        shown: bool,
    },
}

/// An open list.
struct List {
    /// The next item's number; `None` for a bulleted list.
    number: Option<u64>,
    spacing: Spacing,
}

/// How a list's items are spaced: CommonMark's tight and loose lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Spacing {
    /// One item right after another, unless one ends in a block that stands apart.
    Tight,
    /// An empty line between items.
    Loose,
}

struct CodeBlock {
    language: Option<String>,
    text: String,
}

/// A table being collected cell by cell.
struct TableState {
    alignments: Vec<Alignment>,
    head: Option<Vec<Vec<Span<'static>>>>,
    rows: Vec<Vec<Vec<Span<'static>>>>,
    row: Vec<Vec<Span<'static>>>,
}

struct Renderer<'t> {
    theme: &'t Theme,
    width: usize,
    out: Vec<Line<'static>>,
    containers: Vec<Container>,
    lists: Vec<List>,
    /// How each list still to start is spaced (see [`list_spacings`]).
    spacings: std::vec::IntoIter<Spacing>,
    /// The text of the paragraph (or heading, or table cell) being collected.
    inline: Vec<Span<'static>>,
    styles: Vec<Style>,
    /// Each open link's URL and where its text starts in `inline`.
    links: Vec<(String, usize)>,
    code: Option<CodeBlock>,
    table: Option<TableState>,
    /// A block ended: the next one is set off by an empty line.
    blank_pending: bool,
    follows: Follows,
}

impl<'t> Renderer<'t> {
    /// A renderer for events whose lists are spaced as `spacings` says, in order.
    fn new(theme: &'t Theme, width: usize, follows: Follows, spacings: Vec<Spacing>) -> Self {
        Renderer {
            theme,
            width: width.max(1),
            out: Vec::new(),
            containers: Vec::new(),
            lists: Vec::new(),
            spacings: spacings.into_iter(),
            inline: Vec::new(),
            styles: Vec::new(),
            links: Vec::new(),
            code: None,
            table: None,
            blank_pending: follows == Follows::Lines,
            follows,
        }
    }

    fn style(&self) -> Style {
        self.styles.last().copied().unwrap_or_default()
    }

    fn push_style(&mut self, style: Style) {
        self.styles.push(self.style().patch(style));
    }

    fn push_text(&mut self, text: &str, style: Style) {
        self.inline.push(Span::styled(text.to_string(), style));
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) => match &mut self.code {
                Some(code) => code.text.push_str(&text),
                None => self.push_text(&text, self.style()),
            },
            Event::Code(text) => {
                let style = self.style().patch(self.theme.inline_code);
                self.push_text(&text, style);
            }
            Event::SoftBreak => self.push_text(" ", self.style()),
            Event::HardBreak => self.push_text("\n", self.style()),
            Event::Rule => {
                self.flush_paragraph();
                let width = self.width.saturating_sub(self.prefix_width()).max(1);
                let rule = Span::styled("─".repeat(width), self.theme.rule);
                let prefix = self.prefix();
                self.emit(wrap_chars(&[rule], self.width, &prefix));
                self.blank_pending = true;
            }
            Event::Html(html) | Event::InlineHtml(html) => {
                let style = self.style().patch(self.theme.dim);
                self.push_text(&html, style);
            }
            Event::TaskListMarker(done) => {
                let marker = if done { "[x] " } else { "[ ] " };
                self.push_text(marker, self.theme.list_marker);
            }
            Event::FootnoteReference(label) => {
                self.push_text(&format!("[^{label}]"), self.style());
            }
            Event::InlineMath(math) | Event::DisplayMath(math) => {
                let style = self.style().patch(self.theme.inline_code);
                self.push_text(&math, style);
            }
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph | Tag::HtmlBlock => self.flush_paragraph(),
            Tag::Heading { level, .. } => {
                self.flush_paragraph();
                let style = match level {
                    HeadingLevel::H1 => self.theme.heading.add_modifier(Modifier::UNDERLINED),
                    HeadingLevel::H2 => self.theme.heading,
                    _ => self.theme.heading.add_modifier(Modifier::ITALIC),
                };
                self.push_style(style);
            }
            Tag::BlockQuote(_) => {
                self.flush_paragraph();
                // The gap before a quote is outside it: no bar.
                self.emit_pending_blank();
                self.containers.push(Container::Quote);
                self.push_style(self.theme.quote);
            }
            Tag::CodeBlock(kind) => {
                self.flush_paragraph();
                let language = match kind {
                    CodeBlockKind::Fenced(info) if !info.trim().is_empty() => {
                        Some(info.trim().to_string())
                    }
                    CodeBlockKind::Fenced(_) | CodeBlockKind::Indented => None,
                };
                self.code = Some(CodeBlock {
                    language,
                    text: String::new(),
                });
            }
            Tag::List(start) => {
                self.flush_paragraph();
                self.lists.push(List {
                    number: start,
                    spacing: self.spacings.next().unwrap_or(Spacing::Tight),
                });
            }
            Tag::Item => {
                self.flush_paragraph();
                let depth = self.lists.len().saturating_sub(1);
                let marker = match self.lists.last_mut().and_then(|list| list.number.as_mut()) {
                    Some(number) => {
                        let marker = format!("{number}. ");
                        *number += 1;
                        marker
                    }
                    None => ["• ", "◦ ", "▪ "][depth % 3].to_string(),
                };
                self.containers.push(Container::Item {
                    marker,
                    shown: false,
                });
            }
            Tag::Table(alignments) => {
                self.flush_paragraph();
                self.table = Some(TableState {
                    alignments,
                    head: None,
                    rows: Vec::new(),
                    row: Vec::new(),
                });
            }
            Tag::TableHead | Tag::TableRow | Tag::TableCell => self.inline.clear(),
            Tag::Emphasis => self.push_style(Style::new().add_modifier(Modifier::ITALIC)),
            Tag::Strong => self.push_style(Style::new().add_modifier(Modifier::BOLD)),
            Tag::Strikethrough => {
                self.push_style(Style::new().add_modifier(Modifier::CROSSED_OUT));
            }
            Tag::Link { dest_url, .. } => {
                self.links.push((dest_url.to_string(), self.inline.len()));
                self.push_style(self.theme.link);
            }
            Tag::Image { dest_url, .. } => {
                self.push_text("[image: ", self.theme.dim);
                self.links.push((dest_url.to_string(), self.inline.len()));
                self.push_style(self.style());
            }
            Tag::Superscript
            | Tag::Subscript
            | Tag::FootnoteDefinition(_)
            | Tag::DefinitionList
            | Tag::DefinitionListTitle
            | Tag::DefinitionListDefinition
            | Tag::MetadataBlock(_) => self.push_style(self.style()),
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => {
                self.flush_paragraph();
                self.blank_pending = true;
            }
            TagEnd::HtmlBlock => {
                while self
                    .inline
                    .last()
                    .is_some_and(|span| span.content.ends_with('\n'))
                {
                    if let Some(last) = self.inline.last_mut() {
                        let trimmed = last.content.trim_end_matches('\n').to_string();
                        if trimmed.is_empty() {
                            self.inline.pop();
                        } else {
                            last.content = trimmed.into();
                        }
                    }
                }
                self.flush_paragraph();
                self.blank_pending = true;
            }
            TagEnd::Heading(_) => {
                self.styles.pop();
                self.flush_paragraph();
                self.blank_pending = true;
            }
            TagEnd::BlockQuote(_) => {
                self.flush_paragraph();
                self.containers.pop();
                self.styles.pop();
                self.blank_pending = true;
            }
            TagEnd::CodeBlock => {
                if let Some(code) = self.code.take() {
                    self.emit_code(&code);
                }
                self.blank_pending = true;
            }
            TagEnd::List(_) => {
                self.flush_paragraph();
                self.lists.pop();
                // A list nested in a tight list's item is part of its compact run of lines.
                let in_tight_item = matches!(self.containers.last(), Some(Container::Item { .. }))
                    && self
                        .lists
                        .last()
                        .is_some_and(|list| list.spacing == Spacing::Tight);
                self.blank_pending = !in_tight_item;
            }
            TagEnd::Item => {
                self.flush_paragraph();
                if let Some(Container::Item { shown: false, .. }) = self.containers.last() {
                    // An empty item still shows its marker.
                    let prefix = self.prefix();
                    self.emit(wrap_words(&[], self.width, &prefix));
                }
                self.containers.pop();
                match self.lists.last().map(|list| list.spacing) {
                    Some(Spacing::Loose) => self.blank_pending = true,
                    // A tight item's text asks for no gap; a block that stands apart at its end
                    // (code, a quote, a table) still gets one before the next item, as in HTML.
                    Some(Spacing::Tight) | None => {}
                }
            }
            TagEnd::Table => {
                if let Some(table) = self.table.take() {
                    self.emit_table(table);
                }
                self.blank_pending = true;
            }
            TagEnd::TableHead => {
                if let Some(table) = &mut self.table {
                    table.head = Some(std::mem::take(&mut table.row));
                }
            }
            TagEnd::TableRow => {
                if let Some(table) = &mut self.table {
                    let row = std::mem::take(&mut table.row);
                    table.rows.push(row);
                }
            }
            TagEnd::TableCell => {
                let cell = std::mem::take(&mut self.inline);
                if let Some(table) = &mut self.table {
                    table.row.push(cell);
                }
            }
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => {
                self.styles.pop();
            }
            TagEnd::Link => {
                self.styles.pop();
                if let Some((url, start)) = self.links.pop() {
                    let text: String = self.inline[start.min(self.inline.len())..]
                        .iter()
                        .map(|span| span.content.as_ref())
                        .collect();
                    let bare = url.strip_prefix("mailto:").unwrap_or(&url);
                    if !url.is_empty() && text != url && text != bare && !url.starts_with('#') {
                        self.push_text(&format!(" ({url})"), self.theme.link_url);
                    }
                }
            }
            TagEnd::Image => {
                self.styles.pop();
                if let Some((url, _)) = self.links.pop() {
                    self.push_text("]", self.theme.dim);
                    if !url.is_empty() {
                        self.push_text(&format!(" ({url})"), self.theme.link_url);
                    }
                }
            }
            TagEnd::Superscript
            | TagEnd::Subscript
            | TagEnd::FootnoteDefinition
            | TagEnd::DefinitionList
            | TagEnd::DefinitionListTitle
            | TagEnd::DefinitionListDefinition
            | TagEnd::MetadataBlock(_) => {
                self.styles.pop();
            }
        }
    }

    /// What goes before the next block's lines: quote bars, and list markers or their indent.
    fn prefix(&self) -> Prefix {
        let mut prefix = Prefix::none();
        for container in &self.containers {
            match container {
                Container::Quote => {
                    let bar = Span::styled("│ ", self.theme.quote);
                    prefix.first.push(bar.clone());
                    prefix.rest.push(bar);
                }
                Container::Item { marker, shown } => {
                    let indent = Span::raw(" ".repeat(text_width(marker)));
                    prefix.first.push(if *shown {
                        indent.clone()
                    } else {
                        Span::styled(marker.clone(), self.theme.list_marker)
                    });
                    prefix.rest.push(indent);
                }
            }
        }
        prefix
    }

    fn prefix_width(&self) -> usize {
        spans_width(&self.prefix().rest)
    }

    /// Appends a block's lines, after an empty line if the block before asked for one.
    fn emit(&mut self, lines: Vec<Line<'static>>) {
        if lines.is_empty() {
            return;
        }
        self.emit_pending_blank();
        self.out.extend(lines);
        for container in &mut self.containers {
            if let Container::Item { shown, .. } = container {
                *shown = true;
            }
        }
    }

    fn emit_pending_blank(&mut self) {
        let after_lines = match self.follows {
            Follows::Nothing => !self.out.is_empty(),
            Follows::Lines => true,
        };
        if self.blank_pending && after_lines {
            let mut blank = Line::from(self.prefix().rest);
            trim_end(&mut blank);
            self.out.push(blank);
        }
        self.blank_pending = false;
    }

    fn flush_paragraph(&mut self) {
        if self.inline.is_empty() || self.table.is_some() {
            return;
        }
        let spans = std::mem::take(&mut self.inline);
        let prefix = self.prefix();
        self.emit(wrap_words(&spans, self.width, &prefix));
    }

    fn emit_code(&mut self, code: &CodeBlock) {
        let mut prefix = self.prefix();
        prefix.first.push(Span::raw("  "));
        prefix.rest.push(Span::raw("  "));
        let mut lines = Vec::new();
        for spans in highlight_code(&code.text, code.language.as_deref(), self.theme) {
            let line_prefix = if lines.is_empty() {
                prefix.clone()
            } else {
                Prefix {
                    first: prefix.rest.clone(),
                    rest: prefix.rest.clone(),
                }
            };
            lines.extend(wrap_chars(&spans, self.width, &line_prefix));
        }
        self.emit(lines);
    }

    fn emit_table(&mut self, table: TableState) {
        let prefix = self.prefix();
        let available = self.width.saturating_sub(spans_width(&prefix.rest)).max(1);
        let rows = render_table(
            table.head.as_deref(),
            &table.rows,
            &table.alignments,
            available,
            self.theme,
        );
        let lines = rows
            .into_iter()
            .enumerate()
            .map(|(index, spans)| {
                let mut line = if index == 0 {
                    prefix.first.clone()
                } else {
                    prefix.rest.clone()
                };
                line.extend(spans);
                Line::from(line)
            })
            .collect();
        self.emit(lines);
    }

    fn finish(mut self) -> Vec<Line<'static>> {
        if let Some(code) = self.code.take() {
            self.emit_code(&code);
        }
        self.flush_paragraph();
        self.out
    }
}

/// Drops trailing spaces, so that an empty line inside a list is really empty.
fn trim_end(line: &mut Line<'static>) {
    while let Some(last) = line.spans.last_mut() {
        let trimmed = last.content.trim_end().to_string();
        if trimmed.is_empty() {
            line.spans.pop();
        } else {
            last.content = trimmed.into();
            break;
        }
    }
}

#[cfg(test)]
mod tests;
