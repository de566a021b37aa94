//! Redirections and here-documents: what a command reads and writes besides its arguments,
//! and where its standard input comes from.

use tree_sitter::Node;

use super::{Direction, ImplicitAssignment, Redirect, Stdin, Walker, children_with_fields};

impl Walker<'_> {
    pub(super) fn walk_redirected(&mut self, node: Node<'_>) {
        let own_redirects = self.script.redirects.len();
        let dir_before = self.dir.len();
        let mut body = None;
        let mut stdin = None;
        let mut heredoc_pipe = None;
        let mut after = Vec::new();
        let starts_before = self.redirect_starts.len();
        self.redirect_starts.extend(
            children_with_fields(node)
                .into_iter()
                .filter(|(field, _)| *field == Some("redirect"))
                .map(|(_, child)| child.start_byte()),
        );
        for (field, child) in children_with_fields(node) {
            match (field, child.kind()) {
                (Some("body"), _) => body = Some(child),
                (_, "heredoc_redirect") => {
                    let heredoc = self.heredoc(child);
                    stdin = Some(heredoc.stdin);
                    heredoc_pipe = heredoc.pipe;
                    after.extend(heredoc.after);
                }
                (_, "file_redirect" | "herestring_redirect") => {
                    if let Some(input) = self.redirect(child) {
                        stdin = Some(input);
                    }
                }
                (_, "comment") => {}
                _ if child.is_named() => self.walk_nested(child),
                _ => {}
            }
        }
        match (body, heredoc_pipe) {
            (Some(body), Some(pipe)) => {
                let mut stages = vec![body];
                stages.extend(self.pipeline_stages(pipe));
                self.walk_pipeline(&stages, stdin);
            }
            (Some(body), None) => {
                let saved = self.stdin.clone();
                if let Some(input) = stdin {
                    self.stdin = input;
                }
                self.walk_statement(body);
                self.stdin = saved;
            }
            (None, _) => {}
        }
        self.redirect_starts.truncate(starts_before);
        // tree-sitter-bash hangs the redirection of `cd x && echo y > f` on the whole list,
        // where bash gives it to the last command, after the `cd`: judge it from both
        // directories.
        if self.dir.len() != dir_before {
            let moved: Vec<Redirect> = self.script.redirects[own_redirects..]
                .iter()
                .map(|redirect| Redirect {
                    direction: redirect.direction,
                    target: redirect.target.clone(),
                    dir: self.dir.clone(),
                })
                .collect();
            self.script.redirects.extend(moved);
        }
        for statement in after {
            self.walk_statement(statement);
        }
    }

    /// A `<<EOF` redirect: its body, the redirects and pipeline written after the delimiter
    /// word on the same line, and any `&& …` that follows it.
    pub(super) fn heredoc<'t>(&mut self, node: Node<'t>) -> Heredoc<'t> {
        let mut quoted = false;
        let mut strip_tabs = false;
        let mut body = Some(String::new());
        let mut pipe = None;
        let mut after = Vec::new();
        for (field, child) in children_with_fields(node) {
            match (field, child.kind()) {
                (_, "<<-") => strip_tabs = true,
                (_, "heredoc_start") => quoted = self.text(child).contains(['\'', '"', '\\']),
                (_, "heredoc_body") => {
                    let mut cursor = child.walk();
                    let expands = child
                        .named_children(&mut cursor)
                        .any(|part| part.kind() != "heredoc_content");
                    if expands && !quoted {
                        self.walk_nested(child);
                        body = None;
                    } else {
                        body = Some(self.text(child).to_owned());
                    }
                }
                (_, "pipeline") => pipe = Some(child),
                (Some("right"), _) => after.push(child),
                (Some("redirect"), _) => {
                    self.redirect(child);
                }
                _ => {}
            }
        }
        if strip_tabs {
            body = body.map(|text| {
                text.lines()
                    .map(|line| line.trim_start_matches('\t'))
                    .collect::<Vec<_>>()
                    .join("\n")
            });
        }
        Heredoc {
            stdin: Stdin::Heredoc { body },
            pipe,
            after,
        }
    }

    /// Records a file redirect; returns the command's new standard input when it is one.
    pub(super) fn redirect(&mut self, node: Node<'_>) -> Option<Stdin> {
        self.descriptor_variable(node);
        match node.kind() {
            "file_redirect" => {}
            "herestring_redirect" => {
                let mut cursor = node.walk();
                let value = node
                    .named_children(&mut cursor)
                    .find(|child| child.kind() != "file_descriptor");
                let word = value.map(|value| self.word(value)).unwrap_or_default();
                return Some(Stdin::HereString(word));
            }
            "heredoc_redirect" => {
                let heredoc = self.heredoc(node);
                for statement in heredoc.after {
                    self.walk_statement(statement);
                }
                return Some(heredoc.stdin);
            }
            _ => {
                self.walk_nested(node);
                return None;
            }
        }
        let mut operator = "";
        let mut descriptor = None;
        let mut destination = None;
        for (field, child) in children_with_fields(node) {
            match field {
                Some("descriptor") => descriptor = self.text(child).parse::<u32>().ok(),
                Some("destination") if destination.is_none() => destination = Some(child),
                _ if !child.is_named() && operator.is_empty() => operator = child.kind(),
                _ => {}
            }
        }
        let direction = match operator {
            "<" => Direction::Read,
            ">" | ">>" | "&>" | "&>>" | ">|" => Direction::Write,
            ">&" | "<&" => {
                // `2>&1` duplicates a descriptor; `>& file` writes to the file.
                let target = destination?;
                let text = self.text(target);
                if target.kind() == "number" || text == "-" || text.parse::<u32>().is_ok() {
                    return None;
                }
                if operator == "<&" {
                    Direction::Read
                } else {
                    Direction::Write
                }
            }
            _ => return None,
        };
        let destination = destination?;
        let target = self.word(destination);
        // tree-sitter-bash does not know `<>` (open for reading and writing) and parses it
        // as `<` or `>` beside an error: the file is both read and written.
        let before = self
            .src
            .get(node.start_byte().saturating_sub(1)..destination.start_byte())
            .unwrap_or_default();
        if before.contains("<>") {
            for direction in [Direction::Read, Direction::Write] {
                self.script.redirects.push(Redirect {
                    direction,
                    target: target.clone(),
                    dir: self.dir.clone(),
                });
            }
            return matches!(descriptor, None | Some(0)).then_some(Stdin::File(target));
        }
        self.script.redirects.push(Redirect {
            direction,
            target: target.clone(),
            dir: self.dir.clone(),
        });
        (direction == Direction::Read && matches!(descriptor, None | Some(0)))
            .then_some(Stdin::File(target))
    }
}

impl Walker<'_> {
    /// `NAME` when `word` is `{NAME}` written right before a redirection, which assigns NAME
    /// the descriptor it opens.
    pub(super) fn descriptor_name(
        &self,
        word: Node<'_>,
        next: Option<&(Option<&'static str>, Node<'_>)>,
    ) -> Option<String> {
        let before_redirect = match next {
            Some((Some("redirect"), redirect)) => redirect.start_byte() == word.end_byte(),
            // The redirection of the command's last word is the statement's.
            _ => self.redirect_starts.contains(&word.end_byte()),
        };
        if !before_redirect {
            return None;
        }
        let name = self.text(word).strip_prefix('{')?.strip_suffix('}')?;
        let mut chars = name.chars();
        let first = chars.next()?;
        ((first.is_ascii_alphabetic() || first == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .then(|| name.to_owned())
    }

    /// `{NAME}<file` and `{NAME}>&-` assign NAME the descriptor's number.
    fn descriptor_variable(&mut self, node: Node<'_>) {
        for (field, child) in children_with_fields(node) {
            if field != Some("descriptor") && child.kind() != "file_descriptor" {
                continue;
            }
            let text = self.text(child);
            if let Some(name) = text
                .strip_prefix('{')
                .and_then(|rest| rest.strip_suffix('}'))
            {
                self.script.implicit_assignments.push(ImplicitAssignment {
                    name: Some(name.to_owned()),
                    value: None,
                    source: self.text(node).to_owned(),
                });
            }
        }
    }
}

pub(super) struct Heredoc<'t> {
    stdin: Stdin,
    pipe: Option<Node<'t>>,
    after: Vec<Node<'t>>,
}
