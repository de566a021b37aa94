//! Words: quote removal on tree-sitter's word nodes, and the substitutions inside them,
//! which run and so are walked like any other command.

use std::ops::Range;

use tree_sitter::Node;

use super::super::word::{
    Piece, SubstitutionKind, Word, decode_ansi_c, push_unquoted, unescape_double_quoted,
};
use super::{
    Assignment, Evaluation, ImplicitAssignment, InvocationKind, Stdin, Walker,
    children_with_fields, is_statement,
};

impl Walker<'_> {
    pub(super) fn command_name(&mut self, node: Node<'_>) -> Word {
        let mut cursor = node.walk();
        let named: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        match named.as_slice() {
            [only] if only.byte_range() == node.byte_range() => self.word(*only),
            _ => self.concatenation(node, false),
        }
    }

    pub(super) fn assignment(&mut self, node: Node<'_>) -> Assignment {
        let name = node
            .child_by_field_name("name")
            .map(|name| self.text(name).to_owned())
            .unwrap_or_default();
        let value = node
            .child_by_field_name("value")
            .map(|value| self.word(value))
            .unwrap_or_default();
        let appends = self
            .text(node)
            .get(name.len()..)
            .is_some_and(|rest| rest.starts_with("+="));
        Assignment {
            name,
            value,
            appends,
        }
    }

    /// `export`, `declare`, `local`, `readonly`, `typeset`, `unset` and their words.
    pub(super) fn walk_declaration(&mut self, node: Node<'_>) {
        let mut words = Vec::new();
        let mut assignments: Vec<Assignment> = Vec::new();
        // Where the last word ended, and whether it was an assignment.
        let mut last: Option<(usize, bool)> = None;
        for (_, child) in children_with_fields(node) {
            if !child.is_named() {
                words.push(Word::unquoted(self.text(child)));
                last = None;
                continue;
            }
            let (word, assignment) = match child.kind() {
                "variable_assignment" => {
                    let assignment = self.assignment(child);
                    let mut word = Word::unquoted(&format!("{}=", assignment.name));
                    word.append(assignment.value.clone());
                    (word, Some(assignment))
                }
                "comment" => continue,
                _ => (self.word(child), None),
            };
            // `export HO''ME=x` is one word, `HOME=x`, which tree-sitter reads as `HO`, `''`
            // and the assignment `ME=x`.
            if let Some((end, was_assignment)) = last
                && end == child.start_byte()
                && let Some(previous) = words.last_mut()
            {
                previous.append(word);
                if was_assignment || assignment.is_some() {
                    assignments.pop();
                }
                last = Some((child.end_byte(), false));
                continue;
            }
            last = Some((child.end_byte(), assignment.is_some()));
            words.push(word);
            assignments.extend(assignment);
        }
        self.push_invocation(InvocationKind::Declaration, assignments, words, None);
    }

    /// Walks a node that is not a statement, only to find the substitutions in it (they run).
    pub(super) fn walk_nested(&mut self, node: Node<'_>) {
        if !self.enter() {
            return;
        }
        match node.kind() {
            "command_substitution" | "process_substitution" => {
                self.walk_substitution(node);
            }
            "expansion" => {
                self.expansion(node);
            }
            "arithmetic_expansion" => {
                let text = self.text(node).to_owned();
                self.script.evaluations.push(Evaluation::Arithmetic(text));
                let mut cursor = node.walk();
                let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
                for child in children {
                    self.walk_nested(child);
                }
            }
            kind if is_statement(kind) => self.walk_statement(node),
            _ => {
                let mut cursor = node.walk();
                let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
                for child in children {
                    self.walk_nested(child);
                }
            }
        }
        self.leave();
    }

    /// Walks the commands inside `$(…)` or `<(…)`; returns the range of their invocations.
    pub(super) fn walk_substitution(&mut self, node: Node<'_>) -> Range<usize> {
        let saved_dir = self.dir.len();
        let saved_pipeline = self.pipeline.take();
        let saved_stdin = std::mem::replace(&mut self.stdin, Stdin::Inherited);
        let start = self.script.invocations.len();
        self.walk_block(node);
        let end = self.script.invocations.len();
        self.dir.truncate(saved_dir);
        self.pipeline = saved_pipeline;
        self.stdin = saved_stdin;
        start..end
    }

    /// A word after quote removal; the substitutions in it are walked.
    pub(super) fn word(&mut self, node: Node<'_>) -> Word {
        if !self.enter() {
            return Word::unquoted(self.text(node));
        }
        let mut word = Word::default();
        match node.kind() {
            "word"
            | "regex"
            | "extglob_pattern"
            | "test_operator"
            | "brace_expression"
            | "variable_name"
            | "special_variable_name"
            | "file_descriptor" => {
                push_unquoted(&mut word, self.text(node));
            }
            "number" if node.named_child_count() == 0 => {
                push_unquoted(&mut word, self.text(node));
            }
            "number" | "concatenation" => word = self.concatenation(node, false),
            "raw_string" => {
                let text = self.text(node);
                let inner = text
                    .strip_prefix('\'')
                    .and_then(|rest| rest.strip_suffix('\''))
                    .unwrap_or(text);
                word.push_text(inner, true);
            }
            "string" => word = self.concatenation(node, true),
            "translated_string" => {
                let mut cursor = node.walk();
                let inner: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
                for child in inner {
                    let part = self.word(child);
                    word.append(part);
                }
            }
            "ansi_c_string" => {
                let text = self.text(node);
                let inner = text
                    .strip_prefix("$'")
                    .and_then(|rest| rest.strip_suffix('\''))
                    .unwrap_or(text);
                word.push_text(&decode_ansi_c(inner), true);
            }
            "simple_expansion" => {
                let name = self.text(node).trim_start_matches('$');
                word.push(Piece::Variable(name.to_owned()));
            }
            "expansion" => word = self.expansion(node),
            "command_substitution" | "process_substitution" => {
                let kind = if node.kind() == "command_substitution" {
                    SubstitutionKind::Command
                } else {
                    SubstitutionKind::Process
                };
                let inner = self.walk_substitution(node);
                word.push(Piece::Substitution {
                    source: self.text(node).to_owned(),
                    kind,
                    inner,
                });
            }
            "arithmetic_expansion" => {
                let start = self.script.invocations.len();
                self.walk_nested(node);
                word.push(Piece::Substitution {
                    source: self.text(node).to_owned(),
                    kind: SubstitutionKind::Arithmetic,
                    inner: start..self.script.invocations.len(),
                });
            }
            _ => {
                self.walk_nested(node);
                push_unquoted(&mut word, self.text(node));
            }
        }
        self.leave();
        word
    }

    /// The parts of a word written next to each other (`"a"b'c'`), or the inside of a
    /// double-quoted string; text between the parts' nodes is kept as written.
    pub(super) fn concatenation(&mut self, node: Node<'_>, quoted: bool) -> Word {
        let mut word = Word::default();
        let range = node.byte_range();
        let (mut position, end) = if quoted {
            let text = self.text(node);
            let open = usize::from(text.starts_with('"'));
            let close = usize::from(text.len() > open && text.ends_with('"'));
            (range.start + open, range.end - close)
        } else {
            (range.start, range.end)
        };
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
        for child in children {
            let child_range = child.byte_range();
            if child_range.start < position || child_range.end > end {
                continue;
            }
            self.push_raw(&mut word, position..child_range.start, quoted);
            position = child_range.end;
            if quoted && child.kind() == "string_content" {
                self.push_raw(&mut word, child_range, true);
            } else if child.is_named() {
                let part = self.word(child);
                word.append(part);
            } else {
                self.push_raw(&mut word, child_range, quoted);
            }
        }
        self.push_raw(&mut word, position..end, quoted);
        word
    }

    pub(super) fn push_raw(&self, word: &mut Word, range: Range<usize>, quoted: bool) {
        let Some(raw) = self.src.get(range) else {
            return;
        };
        if quoted {
            word.push_text(&unescape_double_quoted(raw), true);
        } else {
            push_unquoted(word, raw);
        }
    }

    pub(super) fn expansion(&mut self, node: Node<'_>) -> Word {
        let mut word = Word::default();
        let text = self.text(node);
        let mut cursor = node.walk();
        let named: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        if let [only] = named.as_slice() {
            let name = self.text(*only);
            if matches!(only.kind(), "variable_name" | "special_variable_name")
                && text == format!("${{{name}}}")
            {
                word.push(Piece::Variable(name.to_owned()));
                return word;
            }
        }
        self.script
            .evaluations
            .push(Evaluation::Parameter(text.to_owned()));
        if let Some(implicit) = assigning_expansion(text) {
            self.script.implicit_assignments.push(implicit);
        }
        let start = self.script.invocations.len();
        for child in named {
            self.walk_nested(child);
        }
        word.push(Piece::Substitution {
            source: text.to_owned(),
            kind: SubstitutionKind::Parameter,
            inner: start..self.script.invocations.len(),
        });
        word
    }
}

/// `${NAME:=value}`, `${NAME=value}`, `${a[i]:=value}` or `${!ref:=value}`: the variable it
/// assigns when NAME is unset (or empty), and the value when it is literal.
fn assigning_expansion(source: &str) -> Option<ImplicitAssignment> {
    let inner = source.strip_prefix("${")?.strip_suffix('}')?;
    let (indirect, rest) = match inner.strip_prefix('!') {
        Some(rest) => (true, rest),
        None => (false, inner),
    };
    let name_len = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    let (name, mut rest) = rest.split_at(name_len);
    let first = name.chars().next()?;
    if !(first.is_ascii_alphabetic() || first == '_') {
        return None;
    }
    let mut written = name.to_owned();
    if rest.starts_with('[') {
        let close = rest.find(']')?;
        written.push_str(rest.get(..=close)?);
        rest = rest.get(close + 1..)?;
    }
    let value = rest.strip_prefix(":=").or_else(|| rest.strip_prefix('='))?;
    let literal = !value.contains(['$', '`', '\\', '"', '\'', '*', '?', '[', '~', '{']);
    Some(ImplicitAssignment {
        name: (!indirect).then_some(written),
        value: literal.then(|| value.to_owned()),
        source: source.to_owned(),
    })
}
