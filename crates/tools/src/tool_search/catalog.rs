//! What the model reads and writes of tool search: the listing in `ToolSearch`'s
//! description, the keyword matching of a query, the result that carries the definitions,
//! and reading those results back from a resumed session's history.

use cairn_protocol::{ContentBlock, Message, ToolSpec};
use serde_json::{Value, json};

use super::{
    DEFAULT_MAX_RESULTS, DESCRIBED_LISTING_DIVISOR, DeferralBudget, LISTED_DESCRIPTION_CHARS,
    NAMED_LISTING_DIVISOR, TOOL_SEARCH,
};

/// The search tool, its description listing the deferred tools: with one-line descriptions
/// while that listing stays within 1/40 of the window, by name within 1/20, and past that
/// as each server's prefix with its number of tools.
pub(super) fn search_spec(deferred: &[ToolSpec], budget: DeferralBudget) -> ToolSpec {
    let fits =
        |listing: &str, divisor: u64| (budget.estimate)(listing) as u64 <= budget.window / divisor;
    let described: String = deferred
        .iter()
        .map(|spec| match one_line(&spec.description) {
            Some(line) => format!("- {}: {line}\n", spec.name),
            None => format!("- {}\n", spec.name),
        })
        .collect();
    let named: String = deferred
        .iter()
        .map(|spec| format!("- {}\n", spec.name))
        .collect();
    let listing = if fits(&described, DESCRIBED_LISTING_DIVISOR) {
        described
    } else if fits(&named, NAMED_LISTING_DIVISOR) {
        named
    } else {
        grouped(deferred)
    };
    ToolSpec {
        name: TOOL_SEARCH.to_string(),
        description: format!(
            "Loads tools whose definitions are not sent with every request, so they can be \
             called. Query `select:<name>,<name>` to load tools by exact name, or write \
             keywords to load the best matches by name and description (`+word` requires the \
             word in the name). The result holds the loaded tools' definitions: they can be \
             called from then on for the rest of the session (they join your tools list \
             later). Load a tool before calling it.\n\n\
             Deferred tools ({}):\n{listing}",
            deferred.len()
        ),
        input_schema: json!({
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "description": "`select:<name>,<name>` for exact names, or keywords"
                },
                "max_results": {
                    "type": "integer",
                    "minimum": 1,
                    "description": format!(
                        "How many tools a keyword query loads at most ({DEFAULT_MAX_RESULTS} unless set)"
                    )
                }
            },
            "required": ["query"]
        }),
    }
}

/// The deferred tools by name prefix (`mcp__github__`), with how many each has, in the
/// order the prefixes first appear.
fn grouped(deferred: &[ToolSpec]) -> String {
    let mut groups: Vec<(&str, usize)> = Vec::new();
    for spec in deferred {
        let prefix = spec
            .name
            .rfind("__")
            .map_or(spec.name.as_str(), |end| &spec.name[..end + 2]);
        match groups.iter_mut().find(|(seen, _)| *seen == prefix) {
            Some((_, count)) => *count += 1,
            None => groups.push((prefix, 1)),
        }
    }
    let mut listing =
        String::from("(too many to name here: search by keyword to find their names)\n");
    for (prefix, count) in groups {
        listing.push_str(&format!("- {prefix}* ({count} tools)\n"));
    }
    listing
}

/// A description's first line, cut to [`LISTED_DESCRIPTION_CHARS`]; `None` when empty.
fn one_line(description: &str) -> Option<String> {
    let line = description.lines().map(str::trim).find(|l| !l.is_empty())?;
    if line.chars().count() <= LISTED_DESCRIPTION_CHARS {
        return Some(line.to_string());
    }
    let cut: String = line.chars().take(LISTED_DESCRIPTION_CHARS - 1).collect();
    Some(format!("{}…", cut.trim_end()))
}

/// The deferred tools a keyword query finds, best first (ties in listing order): a word of
/// the name counts most, then part of the name, then a word of the description. Terms
/// written `+term` must appear in the name.
pub(super) fn best_matches<'a>(
    deferred: &'a [ToolSpec],
    query: &str,
    max: usize,
) -> Vec<&'a ToolSpec> {
    let terms: Vec<(bool, String)> = query
        .split_whitespace()
        .map(|term| match term.strip_prefix('+') {
            Some(required) => (true, required.to_lowercase()),
            None => (false, term.to_lowercase()),
        })
        .filter(|(_, term)| !term.is_empty())
        .collect();
    let mut scored: Vec<(u32, usize, &ToolSpec)> = Vec::new();
    for (index, spec) in deferred.iter().enumerate() {
        let name = spec.name.to_lowercase();
        let name_words: Vec<&str> = name
            .split(['_', '-', '.'])
            .filter(|w| !w.is_empty())
            .collect();
        let description = spec.description.to_lowercase();
        let description_words: Vec<&str> = description
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .collect();
        if terms
            .iter()
            .any(|(required, term)| *required && !name.contains(term.as_str()))
        {
            continue;
        }
        let score: u32 = terms
            .iter()
            .map(|(_, term)| {
                if name_words.contains(&term.as_str()) {
                    10
                } else if name.contains(term.as_str()) {
                    5
                } else if description_words.contains(&term.as_str()) {
                    2
                } else if description.contains(term.as_str()) {
                    1
                } else {
                    0
                }
            })
            .sum();
        if score > 0 {
            scored.push((score, index, spec));
        }
    }
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    scored
        .into_iter()
        .take(max)
        .map(|(_, _, spec)| spec)
        .collect()
}

/// What the model reads back: what was loaded, and each definition on a line of its own
/// (`<function>{json}</function>`, which [`loaded_in_history`] reads again on resume).
pub(super) fn search_result(
    query: &str,
    found: &[&ToolSpec],
    missing: &[String],
    always: &[String],
) -> String {
    let mut text = String::new();
    if found.is_empty() && missing.is_empty() {
        text.push_str(&format!(
            "No deferred tool matches \"{query}\". Try other keywords, or \
             select:<name> with a name from ToolSearch's list."
        ));
    } else {
        let names: Vec<&str> = found.iter().map(|spec| spec.name.as_str()).collect();
        text.push_str(&format!(
            "Loaded {}: call them from now on as any other tool.\n<functions>\n",
            names.join(", ")
        ));
        for spec in found {
            let definition = json!({
                "description": spec.description,
                "name": spec.name,
                "parameters": spec.input_schema,
            });
            text.push_str(&format!("<function>{definition}</function>\n"));
        }
        text.push_str("</functions>");
    }
    for name in missing {
        if !text.is_empty() {
            text.push('\n');
        }
        if always.contains(name) {
            text.push_str(&format!("{name} is not deferred: it is already offered."));
        } else {
            text.push_str(&format!(
                "No deferred tool is named \"{name}\" (ToolSearch's description lists them)."
            ));
        }
    }
    text
}

/// The tools a session loaded, from its history: those `ToolSearch` results returned and
/// those called directly, in the order they first appear. A resumed session offers them
/// again, in the same order, so its tool list starts as the last run's ended.
pub fn loaded_in_history(history: &[Message]) -> Vec<String> {
    let mut searches: Vec<&str> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    let add = |name: String, names: &mut Vec<String>| {
        if name != TOOL_SEARCH && !names.contains(&name) {
            names.push(name);
        }
    };
    for block in history.iter().flat_map(|message| &message.content) {
        match block {
            ContentBlock::ToolUse { id, name, .. } if name == TOOL_SEARCH => searches.push(id),
            ContentBlock::ToolUse { name, .. } => add(name.clone(), &mut names),
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error: false,
            } if searches.contains(&tool_use_id.as_str()) => {
                for line in content.text().lines() {
                    let Some(definition) = line
                        .strip_prefix("<function>")
                        .and_then(|rest| rest.strip_suffix("</function>"))
                    else {
                        continue;
                    };
                    if let Ok(definition) = serde_json::from_str::<Value>(definition)
                        && let Some(name) = definition["name"].as_str()
                    {
                        add(name.to_string(), &mut names);
                    }
                }
            }
            _ => {}
        }
    }
    names
}
