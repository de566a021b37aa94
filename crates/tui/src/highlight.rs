//! Syntax highlighting of code blocks with syntect's bundled grammars and themes.
//!
//! The grammars take a noticeable moment to load, so they are loaded on the first code block
//! that needs them, once per process, and never for a session that shows no code.

use std::sync::OnceLock;

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Span;
use syntect::easy::HighlightLines;
use syntect::highlighting::{FontStyle, ThemeSet};
use syntect::parsing::SyntaxSet;
use syntect::util::LinesWithEndings;

use crate::theme::Theme;

/// Past this size a block is shown plain: highlighting runs again on every streamed delta.
const MAX_HIGHLIGHTED_BYTES: usize = 32 * 1024;

fn syntaxes() -> &'static SyntaxSet {
    static SYNTAXES: OnceLock<SyntaxSet> = OnceLock::new();
    SYNTAXES.get_or_init(SyntaxSet::load_defaults_newlines)
}

fn themes() -> &'static ThemeSet {
    static THEMES: OnceLock<ThemeSet> = OnceLock::new();
    THEMES.get_or_init(ThemeSet::load_defaults)
}

/// The lines of `code` as styled spans, highlighted for `language` (a fence's info string such
/// as `rust` or `py,ignore`) when the theme has colour and the language is known.
pub(crate) fn highlight_code(
    code: &str,
    language: Option<&str>,
    theme: &Theme,
) -> Vec<Vec<Span<'static>>> {
    highlighted(code, language, theme).unwrap_or_else(|| {
        code.lines()
            .map(|line| vec![Span::styled(line.to_string(), theme.code)])
            .collect()
    })
}

fn highlighted(
    code: &str,
    language: Option<&str>,
    theme: &Theme,
) -> Option<Vec<Vec<Span<'static>>>> {
    let theme_name = theme.code_theme?;
    let token = language?
        .split(|c: char| c == ',' || c.is_whitespace())
        .next()
        .filter(|token| !token.is_empty())?;
    if code.len() > MAX_HIGHLIGHTED_BYTES {
        return None;
    }
    let syntaxes = syntaxes();
    let syntax = syntaxes.find_syntax_by_token(token)?;
    let code_theme = themes().themes.get(theme_name)?;
    let mut highlighter = HighlightLines::new(syntax, code_theme);
    let mut lines = Vec::new();
    for line in LinesWithEndings::from(code) {
        let regions = highlighter.highlight_line(line, syntaxes).ok()?;
        let spans = regions
            .into_iter()
            .filter_map(|(style, text)| {
                let text = text.trim_end_matches(['\n', '\r']);
                (!text.is_empty()).then(|| Span::styled(text.to_string(), to_ratatui(style)))
            })
            .collect();
        lines.push(spans);
    }
    Some(lines)
}

fn to_ratatui(style: syntect::highlighting::Style) -> Style {
    let color = style.foreground;
    let mut out = Style::new().fg(Color::Rgb(color.r, color.g, color.b));
    for (font, modifier) in [
        (FontStyle::BOLD, Modifier::BOLD),
        (FontStyle::ITALIC, Modifier::ITALIC),
        (FontStyle::UNDERLINE, Modifier::UNDERLINED),
    ] {
        if style.font_style.contains(font) {
            out = out.add_modifier(modifier);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_languages_get_colours_and_unknown_ones_stay_plain() {
        let theme = Theme::dark();
        let rust = highlight_code("fn main() {}\n", Some("rust"), &theme);
        assert_eq!(rust.len(), 1);
        assert!(rust[0].len() > 1, "{rust:?}");
        assert!(
            rust[0]
                .iter()
                .all(|span| matches!(span.style.fg, Some(Color::Rgb(..))))
        );

        let unknown = highlight_code("a\nb", Some("no-such-language"), &theme);
        assert_eq!(
            unknown,
            vec![
                vec![Span::styled("a", theme.code)],
                vec![Span::styled("b", theme.code)]
            ]
        );
    }

    #[test]
    fn light_and_dark_terminals_get_different_code_colours() {
        let dark = highlight_code("let x = 1;", Some("rs"), &Theme::dark());
        let light = highlight_code("let x = 1;", Some("rs"), &Theme::light());
        assert_ne!(dark[0][0].style.fg, light[0][0].style.fg);
    }

    #[test]
    fn no_colour_means_no_highlighting() {
        let theme = Theme::plain();
        let lines = highlight_code("fn main() {}", Some("rust"), &theme);
        assert_eq!(lines, vec![vec![Span::styled("fn main() {}", theme.code)]]);
    }
}
