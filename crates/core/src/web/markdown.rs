//! A fetched page as the Markdown the side model reads.

use super::fetch::Page;

/// The most characters of Markdown the side model reads; the rest of a page is cut off with
/// a note saying how much.
pub const MAX_MARKDOWN_CHARS: usize = 100_000;

/// Whether the page is HTML: by its `content-type`, or, when it has none, by its first tag.
fn is_html(page: &Page) -> bool {
    let kind = page.content_type.to_ascii_lowercase();
    if kind.is_empty() {
        let start = page.body.trim_start().get(..15).unwrap_or_default();
        return start.to_ascii_lowercase().starts_with("<!doctype html")
            || start.starts_with("<html");
    }
    kind.contains("html")
}

/// Whether the page is text WebFetch can read (HTML, Markdown, plain text, JSON, XML…).
pub fn is_text(content_type: &str) -> bool {
    let kind = content_type.to_ascii_lowercase();
    kind.is_empty()
        || kind.starts_with("text/")
        || ["json", "xml", "javascript", "yaml", "toml"]
            .iter()
            .any(|text| kind.contains(text))
}

/// The page's text as Markdown: HTML converted (scripts and styles left out), any other
/// text as it came.
pub fn page_markdown(page: &Page) -> Result<String, String> {
    if !is_html(page) {
        return Ok(page.body.clone());
    }
    let converter = htmd::HtmlToMarkdown::builder()
        .skip_tags(vec!["script", "style", "noscript", "template", "head"])
        .build();
    converter
        .convert(&page.body)
        .map(|markdown| markdown.trim().to_string())
        .map_err(|error| format!("cannot convert the page's HTML: {error}"))
}

/// `markdown` cut to [`MAX_MARKDOWN_CHARS`] characters, saying so when it was.
pub fn cut_to_fit(markdown: &str) -> String {
    match markdown.char_indices().nth(MAX_MARKDOWN_CHARS) {
        None => markdown.to_string(),
        Some((end, _)) => format!(
            "{}\n\n[The page was cut here: {} more characters were left out.]",
            &markdown[..end],
            markdown[end..].chars().count()
        ),
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn page(content_type: &str, body: &str) -> Page {
        Page {
            url: url::Url::parse("https://example.com/").unwrap_or_else(|_| unreachable!()),
            content_type: content_type.to_string(),
            body: body.to_string(),
        }
    }

    #[test]
    fn html_becomes_markdown_without_its_scripts() {
        let html = "<html><head><title>T</title><style>p{}</style></head><body>\
                    <h1>Title</h1><p>Some <a href=\"https://example.com/x\">link</a>.</p>\
                    <script>alert(1)</script></body></html>";
        assert_eq!(
            page_markdown(&page("text/html; charset=utf-8", html)),
            Ok("# Title\n\nSome [link](https://example.com/x).".to_string())
        );
    }

    #[test]
    fn other_text_is_kept_as_it_came() {
        assert_eq!(
            page_markdown(&page("text/plain", "<b>not html</b>")),
            Ok("<b>not html</b>".to_string())
        );
        assert!(is_text("application/json"));
        assert!(!is_text("image/png"));
    }

    #[test]
    fn long_markdown_is_cut_with_a_note() {
        let long = "é".repeat(MAX_MARKDOWN_CHARS + 5);
        let cut = cut_to_fit(&long);
        assert!(cut.starts_with(&"é".repeat(MAX_MARKDOWN_CHARS)));
        assert!(cut.ends_with("[The page was cut here: 5 more characters were left out.]"));
        assert_eq!(cut_to_fit("short"), "short");
    }
}
