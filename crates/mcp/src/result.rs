//! A `tools/call` result as the model reads it: text, images, embedded resources and links,
//! `structuredContent` when nothing else says it, `isError` as an error result, and the whole
//! capped at `MAX_MCP_OUTPUT_TOKENS`.

use cairn_protocol::{ImageSource, ToolResultBlock, ToolResultContent};
use cairn_tools::ToolOutput;
use serde_json::Value;

/// Claude Code's default cap on one MCP result, in tokens.
pub const DEFAULT_MAX_OUTPUT_TOKENS: usize = 25_000;

/// About four characters to a token, as cairn estimates elsewhere.
const CHARS_PER_TOKEN: usize = 4;

/// The model's view of `result` (a `CallToolResult` as JSON), at most `max_tokens` long.
pub fn to_output(result: &Value, max_tokens: usize) -> ToolOutput {
    let mut blocks: Vec<ToolResultBlock> = Vec::new();
    let content = result
        .get("content")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    for item in content {
        blocks.push(block_of(item));
    }
    let has_text = blocks
        .iter()
        .any(|block| matches!(block, ToolResultBlock::Text { text } if !text.is_empty()));
    if !has_text && let Some(structured) = result.get("structuredContent") {
        let text = serde_json::to_string_pretty(structured).unwrap_or_default();
        blocks.push(ToolResultBlock::Text { text });
    }
    let is_error = result.get("isError").and_then(Value::as_bool) == Some(true);
    let blocks = cap(blocks, max_tokens);
    let content = match blocks.as_slice() {
        [] => ToolResultContent::Text(if is_error {
            "The tool failed without saying why.".into()
        } else {
            "(no content)".into()
        }),
        [ToolResultBlock::Text { text }] => ToolResultContent::Text(text.clone()),
        _ => ToolResultContent::Blocks(blocks),
    };
    ToolOutput {
        content,
        is_error,
        effect: None,
    }
}

fn text(text: impl Into<String>) -> ToolResultBlock {
    ToolResultBlock::Text { text: text.into() }
}

fn str_of<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// One content item. What the model cannot take (audio, binary blobs) is described, not
/// dropped, so it knows something was there.
fn block_of(item: &Value) -> ToolResultBlock {
    match str_of(item, "type") {
        "text" => text(str_of(item, "text")),
        "image" => ToolResultBlock::Image {
            source: ImageSource::Base64 {
                media_type: str_of(item, "mimeType").to_string(),
                data: str_of(item, "data").to_string(),
            },
        },
        "audio" => text(format!(
            "[audio ({}), {} bytes of base64, not shown]",
            str_of(item, "mimeType"),
            str_of(item, "data").len()
        )),
        "resource" => {
            let resource = item.get("resource").unwrap_or(&Value::Null);
            let uri = str_of(resource, "uri");
            match resource.get("text").and_then(Value::as_str) {
                Some(body) => text(format!("[resource {uri}]\n{body}")),
                None => text(format!(
                    "[resource {uri} ({}), {} bytes of base64, not shown]",
                    str_of(resource, "mimeType"),
                    str_of(resource, "blob").len()
                )),
            }
        }
        "resource_link" => text(format!(
            "[resource link: {} <{}>{}]",
            str_of(item, "name"),
            str_of(item, "uri"),
            item.get("description")
                .and_then(Value::as_str)
                .map(|description| format!(" {description}"))
                .unwrap_or_default()
        )),
        other => text(format!("[content of type \"{other}\", not shown]")),
    }
}

/// The blocks cut to `max_tokens`: text is cut where the budget ends, with a note saying how
/// much there was; an image counts as a fixed share.
fn cap(blocks: Vec<ToolResultBlock>, max_tokens: usize) -> Vec<ToolResultBlock> {
    let budget = max_tokens.saturating_mul(CHARS_PER_TOKEN);
    let total: usize = blocks.iter().map(block_chars).sum();
    if total <= budget {
        return blocks;
    }
    let mut left = budget;
    let mut kept = Vec::new();
    for block in blocks {
        let size = block_chars(&block);
        if size <= left {
            left -= size;
            kept.push(block);
            continue;
        }
        if let ToolResultBlock::Text { text: body } = block {
            let mut cut = left.min(body.len());
            while !body.is_char_boundary(cut) {
                cut -= 1;
            }
            kept.push(text(&body[..cut]));
        }
        break;
    }
    kept.push(text(format!(
        "\n[The result was cut: it was about {} tokens, over the limit of {max_tokens} \
         (MAX_MCP_OUTPUT_TOKENS).]",
        total / CHARS_PER_TOKEN
    )));
    kept
}

fn block_chars(block: &ToolResultBlock) -> usize {
    match block {
        ToolResultBlock::Text { text } => text.len(),
        // Images are sized by the provider, not by their base64; count them as ~1,600 tokens.
        ToolResultBlock::Image { .. } => 1_600 * CHARS_PER_TOKEN,
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn each_kind_of_content_reads_as_the_model_should_see_it() {
        let cases = [
            (
                json!({"content": [{"type": "text", "text": "hi"}]}),
                ToolOutput::text("hi"),
            ),
            (
                json!({"content": [{"type": "text", "text": "boom"}], "isError": true}),
                ToolOutput::error("boom"),
            ),
            (
                json!({"content": [], "structuredContent": {"n": 1}}),
                ToolOutput::text("{\n  \"n\": 1\n}"),
            ),
            (
                json!({"content": [{"type": "resource", "resource": {"uri": "file:///a", "text": "body"}}]}),
                ToolOutput::text("[resource file:///a]\nbody"),
            ),
            (
                json!({"content": [{"type": "resource_link", "uri": "file:///b", "name": "b"}]}),
                ToolOutput::text("[resource link: b <file:///b>]"),
            ),
            (json!({"content": []}), ToolOutput::text("(no content)")),
        ];
        for (result, expected) in cases {
            assert_eq!(to_output(&result, 100), expected, "{result}");
        }
        let image = to_output(
            &json!({"content": [
                {"type": "text", "text": "a dot"},
                {"type": "image", "data": "iVBOR", "mimeType": "image/png"}
            ]}),
            DEFAULT_MAX_OUTPUT_TOKENS,
        );
        assert_eq!(
            image.content,
            ToolResultContent::Blocks(vec![
                text("a dot"),
                ToolResultBlock::Image {
                    source: ImageSource::Base64 {
                        media_type: "image/png".into(),
                        data: "iVBOR".into()
                    }
                }
            ])
        );
    }

    #[test]
    fn a_long_result_is_cut_at_the_token_limit_with_a_note() {
        let long = "x".repeat(1_000);
        let output = to_output(&json!({"content": [{"type": "text", "text": long}]}), 100);
        let ToolResultContent::Blocks(blocks) = &output.content else {
            panic!("{output:?}");
        };
        assert_eq!(blocks[0], text("x".repeat(400)));
        assert!(
            output
                .content
                .text()
                .contains("about 250 tokens, over the limit of 100"),
            "{}",
            output.content.text()
        );
    }
}
