//! The colours and text attributes the UI uses, for a dark or a light terminal, or none at all.
//!
//! Every style in the UI comes from a [`Theme`], so that `NO_COLOR` (<https://no-color.org>)
//! is one switch: [`Theme::plain`] keeps bold, italic, dim and underline, which are not
//! colours, and drops every foreground and background colour.

use std::ffi::OsStr;

use ratatui::style::{Color, Modifier, Style};

/// Whether the terminal's background is dark or light.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Appearance {
    /// A dark background (the default when the terminal does not say): light text.
    #[default]
    Dark,
    /// A light background: darker text that keeps contrast on white.
    Light,
}

impl Appearance {
    /// Reads the `COLORFGBG` convention (`"15;0"`: foreground 15 on background 0) that rxvt,
    /// Konsole and others set. Backgrounds 7 and 9–15 are light; anything else, or no value,
    /// counts as dark, the common case.
    pub fn from_colorfgbg(value: Option<&str>) -> Appearance {
        let background = value
            .and_then(|value| value.rsplit(';').next())
            .and_then(|background| background.trim().parse::<u8>().ok());
        match background {
            Some(7 | 9..=15) => Appearance::Light,
            _ => Appearance::Dark,
        }
    }
}

/// Whether the UI may use colour at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColorSupport {
    /// Colours may be used: the dark and light themes.
    Colors,
    /// `NO_COLOR` is set: attributes only.
    NoColor,
}

/// The styles of everything the UI draws.
///
/// ```
/// use cairn_tui::{Appearance, Theme};
///
/// let theme = Theme::from_env(Appearance::Dark, Some("1".as_ref()));
/// assert_eq!(theme, Theme::plain());
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Theme {
    /// Whether this theme uses colour; [`ColorSupport::NoColor`] only for [`Theme::plain`].
    pub color: ColorSupport,
    /// The name of the syntect theme for code blocks; `None` leaves code unhighlighted.
    pub code_theme: Option<&'static str>,
    /// Secondary text: thinking, URLs, hints, line-number gutters.
    pub dim: Style,
    /// Markdown headings.
    pub heading: Style,
    /// `code` inside a sentence of Markdown.
    pub inline_code: Style,
    /// Code-block text when it is not highlighted.
    pub code: Style,
    /// A Markdown link's text.
    pub link: Style,
    /// The ` (url)` written after a link's text, so the target is visible without a mouse.
    pub link_url: Style,
    /// A block quote's text and its `│` bar.
    pub quote: Style,
    /// The bullet or number before a Markdown list item.
    pub list_marker: Style,
    /// The lines around and between the cells of a Markdown table.
    pub table_border: Style,
    /// A Markdown horizontal rule (`---`).
    pub rule: Style,
    /// The `>` before the user's messages.
    pub user_prompt: Style,
    /// The text of the user's own messages, in the transcript and the memory dialog.
    pub user_text: Style,
    /// The bullet before an assistant message.
    pub assistant_bullet: Style,
    /// The model's thinking, when it is shown.
    pub thinking: Style,
    /// A tool call's name in its header line.
    pub tool_name: Style,
    /// The `●` before a tool call that has no result yet.
    pub tool_pending: Style,
    /// The `●` before a tool call that succeeded.
    pub success: Style,
    /// Failures: a failed tool call's dot and output, error cells, `bypassPermissions` in the
    /// status line.
    pub error: Style,
    /// Cautions: warning cells, a dialog's reason for asking, the trust dialog's notes.
    pub warning: Style,
    /// Lines a diff adds.
    pub diff_added: Style,
    /// Lines a diff removes.
    pub diff_removed: Style,
    /// A diff's line numbers and the `⋮` between its hunks.
    pub diff_gutter: Style,
    /// A completed item of the todo checklist.
    pub todo_done: Style,
    /// The todo item in progress.
    pub todo_active: Style,
    /// A todo item not started yet.
    pub todo_pending: Style,
    /// The frame around a dialog.
    pub dialog_border: Style,
    /// A dialog's title (and the session picker's).
    pub dialog_title: Style,
    /// The option under the cursor in a dialog.
    pub selected: Style,
    /// The status line and the other quiet text below the composer (hints, the spinner,
    /// menu markers).
    pub status: Style,
    /// The permission mode in the status line when it is neither `default` nor
    /// `bypassPermissions`.
    pub status_mode: Style,
}

impl Theme {
    /// The theme for a terminal: [`Theme::plain`] when `no_color` (the value of the
    /// `NO_COLOR` environment variable) is set and not empty, else the one for `appearance`.
    pub fn from_env(appearance: Appearance, no_color: Option<&OsStr>) -> Theme {
        match no_color {
            Some(value) if !value.is_empty() => Theme::plain(),
            _ => Theme::for_appearance(appearance),
        }
    }

    /// The coloured theme for `appearance`, regardless of `NO_COLOR`: [`Theme::dark`] or
    /// [`Theme::light`].
    pub fn for_appearance(appearance: Appearance) -> Theme {
        match appearance {
            Appearance::Dark => Theme::dark(),
            Appearance::Light => Theme::light(),
        }
    }

    /// For a dark background. Named ANSI colours follow the terminal's own palette.
    pub fn dark() -> Theme {
        Theme {
            code_theme: Some("base16-ocean.dark"),
            heading: Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
            inline_code: Style::new().fg(Color::LightBlue),
            code: Style::new().fg(Color::Gray),
            link: Style::new()
                .fg(Color::LightBlue)
                .add_modifier(Modifier::UNDERLINED),
            list_marker: Style::new().fg(Color::Gray),
            todo_active: Style::new()
                .fg(Color::LightBlue)
                .add_modifier(Modifier::BOLD),
            selected: Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
            ..Theme::colored_base()
        }
    }

    /// For a light background: darker tones that keep contrast on white.
    pub fn light() -> Theme {
        Theme {
            code_theme: Some("InspiredGitHub"),
            heading: Style::new().fg(Color::Blue).add_modifier(Modifier::BOLD),
            inline_code: Style::new().fg(Color::Blue),
            code: Style::new().fg(Color::Black),
            link: Style::new()
                .fg(Color::Blue)
                .add_modifier(Modifier::UNDERLINED),
            list_marker: Style::new().fg(Color::DarkGray),
            // Light grey and yellow fade into a white background.
            quote: Style::new()
                .fg(Color::DarkGray)
                .add_modifier(Modifier::ITALIC),
            tool_pending: Style::new().fg(Color::Magenta),
            warning: Style::new().fg(Color::Magenta),
            dialog_border: Style::new().fg(Color::Blue),
            dialog_title: Style::new().fg(Color::Blue).add_modifier(Modifier::BOLD),
            todo_active: Style::new().fg(Color::Blue).add_modifier(Modifier::BOLD),
            selected: Style::new().fg(Color::Blue).add_modifier(Modifier::BOLD),
            ..Theme::colored_base()
        }
    }

    /// No colour at all (`NO_COLOR`): bold, italic, dim, underline and reverse only.
    pub fn plain() -> Theme {
        let bold = Style::new().add_modifier(Modifier::BOLD);
        let dim = Style::new().add_modifier(Modifier::DIM);
        Theme {
            color: ColorSupport::NoColor,
            code_theme: None,
            dim,
            heading: bold,
            // Without colour, code in a sentence stands out reversed.
            inline_code: Style::new().add_modifier(Modifier::REVERSED),
            code: Style::new(),
            link: Style::new().add_modifier(Modifier::UNDERLINED),
            link_url: dim,
            quote: Style::new().add_modifier(Modifier::ITALIC),
            list_marker: Style::new(),
            table_border: dim,
            rule: dim,
            user_prompt: bold,
            user_text: Style::new(),
            assistant_bullet: Style::new(),
            thinking: Style::new().add_modifier(Modifier::DIM | Modifier::ITALIC),
            tool_name: bold,
            tool_pending: dim,
            success: Style::new(),
            error: bold,
            warning: bold,
            diff_added: Style::new(),
            diff_removed: Style::new(),
            diff_gutter: dim,
            todo_done: Style::new().add_modifier(Modifier::CROSSED_OUT | Modifier::DIM),
            todo_active: bold,
            todo_pending: Style::new(),
            dialog_border: Style::new(),
            dialog_title: bold,
            selected: Style::new().add_modifier(Modifier::REVERSED),
            status: dim,
            status_mode: bold,
        }
    }

    /// What the dark and light themes share: mostly colours that read on either background.
    fn colored_base() -> Theme {
        let dim = Style::new().add_modifier(Modifier::DIM);
        Theme {
            color: ColorSupport::Colors,
            code_theme: None,
            dim,
            heading: Style::new().add_modifier(Modifier::BOLD),
            inline_code: Style::new(),
            code: Style::new(),
            link: Style::new().add_modifier(Modifier::UNDERLINED),
            link_url: dim,
            quote: Style::new().fg(Color::Gray).add_modifier(Modifier::ITALIC),
            list_marker: Style::new(),
            table_border: Style::new().fg(Color::DarkGray),
            rule: Style::new().fg(Color::DarkGray),
            user_prompt: Style::new().fg(Color::Magenta).add_modifier(Modifier::BOLD),
            user_text: Style::new(),
            assistant_bullet: Style::new(),
            thinking: Style::new().add_modifier(Modifier::DIM | Modifier::ITALIC),
            tool_name: Style::new().add_modifier(Modifier::BOLD),
            tool_pending: Style::new().fg(Color::Yellow),
            success: Style::new().fg(Color::Green),
            error: Style::new().fg(Color::Red),
            warning: Style::new().fg(Color::Yellow),
            diff_added: Style::new().fg(Color::Green),
            diff_removed: Style::new().fg(Color::Red),
            diff_gutter: dim,
            todo_done: Style::new()
                .fg(Color::Green)
                .add_modifier(Modifier::CROSSED_OUT),
            todo_active: Style::new().add_modifier(Modifier::BOLD),
            todo_pending: Style::new(),
            dialog_border: Style::new().fg(Color::Yellow),
            dialog_title: Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD),
            selected: Style::new().add_modifier(Modifier::BOLD),
            status: dim,
            status_mode: Style::new().fg(Color::Magenta),
        }
    }

    /// Whether this theme uses colour: false only for [`Theme::plain`].
    pub fn has_color(&self) -> bool {
        match self.color {
            ColorSupport::Colors => true,
            ColorSupport::NoColor => false,
        }
    }
}

impl Default for Theme {
    fn default() -> Theme {
        Theme::dark()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_color_set_and_not_empty_means_plain() {
        assert_eq!(
            Theme::from_env(Appearance::Light, Some(OsStr::new("1"))),
            Theme::plain()
        );
        assert_eq!(
            Theme::from_env(Appearance::Light, Some(OsStr::new(""))),
            Theme::light()
        );
        assert_eq!(Theme::from_env(Appearance::Dark, None), Theme::dark());
    }

    #[test]
    fn colorfgbg_names_the_background_last() {
        assert_eq!(Appearance::from_colorfgbg(Some("0;15")), Appearance::Light);
        assert_eq!(Appearance::from_colorfgbg(Some("15;0")), Appearance::Dark);
        assert_eq!(
            Appearance::from_colorfgbg(Some("0;default;7")),
            Appearance::Light
        );
        assert_eq!(Appearance::from_colorfgbg(None), Appearance::Dark);
    }

    #[test]
    fn the_plain_theme_has_no_colour_anywhere() {
        let theme = Theme::plain();
        for style in [
            theme.dim,
            theme.heading,
            theme.link,
            theme.error,
            theme.diff_added,
            theme.diff_removed,
            theme.selected,
            theme.status_mode,
        ] {
            assert_eq!((style.fg, style.bg), (None, None), "{style:?}");
        }
    }
}
