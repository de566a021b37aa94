//! Tests of [`super::render_markdown`]: paragraphs, lists tight and loose, quotes, links, code,
//! and widths.

use pretty_assertions::assert_eq;

use super::*;

fn plain(source: &str, width: u16) -> Vec<String> {
    render_markdown(source, width, &Theme::plain())
        .iter()
        .map(|line| line.to_string())
        .collect()
}

#[test]
fn paragraphs_are_separated_and_wrapped() {
    assert_eq!(
        plain("one two three four\n\nfive", 10),
        vec!["one two", "three four", "", "five"]
    );
}

#[test]
fn nested_lists_indent_under_their_marker() {
    assert_eq!(
        plain(
            "1. first item\n   - inner one\n   - inner two\n2. second",
            40
        ),
        vec![
            "1. first item",
            "   ◦ inner one",
            "   ◦ inner two",
            "2. second"
        ]
    );
}

#[test]
fn a_loose_list_keeps_its_empty_lines() {
    assert_eq!(
        plain(
            "- loose item one\n\n  second paragraph of item one\n\n- loose item two\n\nafter",
            40
        ),
        vec![
            "• loose item one",
            "",
            "  second paragraph of item one",
            "",
            "• loose item two",
            "",
            "after"
        ]
    );
}

#[test]
fn code_in_an_item_is_set_apart_from_the_next_item() {
    let loose = "1. Step with code:\n\n   ```python\n   print(\"hi\")\n   ```\n\n2. Next step";
    assert_eq!(
        plain(loose, 40),
        vec![
            "1. Step with code:",
            "",
            "     print(\"hi\")",
            "",
            "2. Next step"
        ]
    );
    let tight = "- step:\n  ```\n  run\n  ```\n- next\n- last";
    assert_eq!(
        plain(tight, 40),
        vec!["• step:", "    run", "", "• next", "• last"]
    );
}

#[test]
fn a_loose_list_is_loose_throughout_and_its_nested_tight_list_is_not() {
    assert_eq!(
        plain("1. one\n   - a\n   - b\n\n2. two\n3. three", 40),
        vec![
            "1. one", "", "   ◦ a", "   ◦ b", "", "2. two", "", "3. three"
        ]
    );
}

#[test]
fn a_wrapped_list_item_hangs_under_its_text() {
    assert_eq!(
        plain("- alpha beta gamma delta", 14),
        vec!["• alpha beta", "  gamma delta"]
    );
}

#[test]
fn quotes_get_a_bar_on_every_line() {
    assert_eq!(
        plain("> quoted text that wraps\n>\n> again", 14),
        vec!["│ quoted text", "│ that wraps", "│", "│ again"]
    );
}

#[test]
fn links_show_their_url_unless_it_is_the_text() {
    assert_eq!(
        plain("see [docs](https://x.dev) and <https://y.dev>", 80),
        vec!["see docs (https://x.dev) and https://y.dev"]
    );
}

#[test]
fn an_unclosed_fence_is_code_so_far() {
    assert_eq!(
        plain("Look:\n\n```rust\nfn main() {\n    let x = 1;", 40),
        vec!["Look:", "", "  fn main() {", "      let x = 1;"]
    );
}

#[test]
fn task_lists_and_rules() {
    assert_eq!(
        plain("- [x] done\n- [ ] todo\n\n---\n\nafter", 12),
        vec!["• [x] done", "• [ ] todo", "", "────────────", "", "after"]
    );
}

#[test]
fn nothing_is_wider_than_asked_at_any_width() {
    let source = "# A heading with `code` in it\n\n\
        Some *prose* with a [link](https://example.com/a/long/path) and an \
        ![image](https://x.dev/i.png).\n\n\
        - item one that is long enough to wrap\n  > a quote inside an item, also long\n\
        - [ ] a task\n\n\
        <div>raw html</div>\n\n\
        ```\nplain code that is a fairly long line of text\n```\n\n\
        | a | b |\n|---|---|\n| one cell | another cell with words |\n";
    for theme in [Theme::dark(), Theme::plain()] {
        for width in 8..=80u16 {
            for line in render_markdown(source, width, &theme) {
                assert!(
                    line.width() <= usize::from(width),
                    "{width}: {:?}",
                    line.to_string()
                );
            }
        }
    }
    for width in 0..8 {
        render_markdown(source, width, &Theme::dark());
    }
    assert!(render_markdown("", 40, &Theme::dark()).is_empty());
}

#[test]
fn images_and_html_are_shown_as_text() {
    assert_eq!(
        plain("![a cat](cat.png) <b>hi</b>\n\n<div>\nblock\n</div>", 40),
        vec![
            "[image: a cat] (cat.png) <b>hi</b>",
            "",
            "<div>",
            "block",
            "</div>"
        ]
    );
}

#[test]
fn styles_nest() {
    let lines = render_markdown("**bold *both***", 40, &Theme::plain());
    let both = &lines[0].spans[1];
    assert_eq!(both.content, "both");
    assert!(
        both.style
            .add_modifier
            .contains(Modifier::BOLD | Modifier::ITALIC)
    );
}
