//! From tree-sitter-bash's syntax tree to what will run: simple commands (with their words
//! after quote removal), redirections, pipelines and function definitions.
//!
//! The walk keeps the shell's structure only where judging needs it: which pipeline stage a
//! command sits in and what its standard input is, which `cd` steps precede it, and which
//! commands were found inside a substitution.

mod redirects;
mod words;

use std::cell::RefCell;
use std::ops::Range;

use tree_sitter::{Node, Parser, Tree};

use super::word::Word;

/// Deeper syntax than this is not walked (it would only come from a hostile input).
const MAX_NESTING: usize = 200;

/// Each command keeps the `cd` steps before it; past this many, the directory is unknown.
const MAX_DIR_STEPS: usize = 32;

/// Everything that runs in one piece of shell text.
#[derive(Debug, Default)]
pub(crate) struct Script {
    /// Every simple command, in the order it runs: a substitution's commands come before the
    /// command whose word they are in.
    pub(crate) invocations: Vec<Invocation>,
    pub(crate) redirects: Vec<Redirect>,
    pub(crate) pipelines: Vec<Pipeline>,
    pub(crate) functions: Vec<FunctionDef>,
    /// Text Bash evaluates as arithmetic or expands with an operator, wherever it appears
    /// (`$((…))`, `((…))`, `${a[i]}`, `${x:1:n}`, …).
    pub(crate) evaluations: Vec<Evaluation>,
    /// `for`/`select` loop variables.
    pub(crate) loop_variables: Vec<LoopVariable>,
    /// Variables assigned by an expansion or a redirection: `${X:=v}`, `{X}<file`.
    pub(crate) implicit_assignments: Vec<ImplicitAssignment>,
    /// Sentences about what could not be parsed or understood.
    pub(crate) problems: Vec<String>,
}

impl Script {
    pub(crate) fn defines_function(&self, name: &str) -> bool {
        self.functions.iter().any(|function| function.name == name)
    }
}

/// One simple command (or declaration, or `[[ … ]]` test).
#[derive(Debug)]
pub(crate) struct Invocation {
    pub(crate) kind: InvocationKind,
    /// `NAME=value` prefixes.
    pub(crate) assignments: Vec<Assignment>,
    /// The command name and its arguments; empty for a bare assignment.
    pub(crate) words: Vec<Word>,
    pub(crate) stdin: Stdin,
    /// The `cd` steps taken before this command in its scope.
    pub(crate) dir: Vec<DirStep>,
    pub(crate) pipeline: Option<(usize, usize)>,
    /// Run with `&`.
    pub(crate) background: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum InvocationKind {
    Command,
    /// `export`, `local`, `declare`, `readonly`, `typeset`, `unset`.
    Declaration,
    /// `[ … ]` or `[[ … ]]`.
    Test,
}

#[derive(Debug, Clone)]
pub(crate) struct Assignment {
    /// As written, with any subscript (`a[$i]`).
    pub(crate) name: String,
    pub(crate) value: Word,
    /// `NAME+=value`: the value is appended to what the variable held.
    pub(crate) appends: bool,
}

/// A variable assigned without `NAME=value`: `${NAME:=value}` and `${NAME=value}` (when NAME
/// is unset or empty), `{NAME}<file` (the descriptor number).
#[derive(Debug, Clone)]
pub(crate) struct ImplicitAssignment {
    /// With any subscript; `None` for `${!ref:=value}`, which assigns the variable whose name
    /// `ref` holds.
    pub(crate) name: Option<String>,
    /// The value when it is literal text.
    pub(crate) value: Option<String>,
    /// As written, for reasons.
    pub(crate) source: String,
}

/// Source text that Bash evaluates when it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Evaluation {
    /// An arithmetic expression as written: `$((…))`, `$[…]`, `((…))`, or a part of
    /// `for ((…;…;…))`.
    Arithmetic(String),
    /// A parameter expansion with more than a name, as written: `${a[i]}`, `${x:1:n}`,
    /// `${!x}`, `${x@P}`, `${x:-y}`.
    Parameter(String),
}

/// `for NAME in WORDS` or `select NAME in WORDS`.
#[derive(Debug, Clone)]
pub(crate) struct LoopVariable {
    pub(crate) name: String,
    /// `None` for `for NAME; do …` (the positional parameters).
    pub(crate) values: Option<Vec<Word>>,
}

/// Where a command's standard input comes from.
#[derive(Debug, Clone)]
pub(crate) enum Stdin {
    Inherited,
    /// From the previous stage of pipeline `pipeline`.
    Piped {
        pipeline: usize,
        stage: usize,
    },
    /// A here-document; `body` is its text when that has no expansions.
    Heredoc {
        body: Option<String>,
    },
    HereString(Word),
    File(Word),
}

/// A change of directory before a command.
#[derive(Debug, Clone)]
pub(crate) enum DirStep {
    To(Word),
    Home,
    Unknown,
}

#[derive(Debug)]
pub(crate) struct Redirect {
    pub(crate) direction: Direction,
    pub(crate) target: Word,
    pub(crate) dir: Vec<DirStep>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    Read,
    Write,
}

/// A pipeline, as the invocations found in each stage.
#[derive(Debug, Default)]
pub(crate) struct Pipeline {
    pub(crate) stages: Vec<Range<usize>>,
}

/// `name() { body; }`, with the invocations of its body.
#[derive(Debug)]
pub(crate) struct FunctionDef {
    pub(crate) name: String,
    pub(crate) body: Range<usize>,
}

thread_local! {
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

fn new_parser() -> Option<Parser> {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .ok()?;
    Some(parser)
}

fn parse_tree(text: &str) -> Option<Tree> {
    PARSER.with(|cell| match cell.try_borrow_mut() {
        Ok(mut slot) => {
            if slot.is_none() {
                *slot = new_parser();
            }
            slot.as_mut()?.parse(text, None)
        }
        Err(_) => new_parser()?.parse(text, None),
    })
}

/// Parses `text` and collects what runs in it.
pub(crate) fn parse_script(text: &str) -> Script {
    let Some(tree) = parse_tree(text) else {
        return Script {
            problems: vec![
                "the command could not be parsed: the Bash parser is unavailable".into(),
            ],
            ..Script::default()
        };
    };
    let root = tree.root_node();
    let mut walker = Walker {
        src: text,
        script: Script::default(),
        dir: Vec::new(),
        stdin: Stdin::Inherited,
        pipeline: None,
        depth: 0,
        redirect_starts: Vec::new(),
    };
    walker.walk_block(root);
    if root.has_error() {
        let problem = describe_error(root, text);
        walker.script.problems.insert(0, problem);
    }
    walker.script
}

fn describe_error(root: Node<'_>, src: &str) -> String {
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if node.is_missing() {
            return format!(
                "the command could not be parsed: `{}` is missing",
                node.kind()
            );
        }
        if node.is_error() {
            let text = src.get(node.byte_range()).unwrap_or_default();
            let snippet: String = text.chars().take(40).collect();
            return format!("the command could not be parsed near `{}`", snippet.trim());
        }
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
        stack.extend(children.into_iter().rev());
    }
    "the command could not be parsed".into()
}

fn children_with_fields(node: Node<'_>) -> Vec<(Option<&'static str>, Node<'_>)> {
    let mut cursor = node.walk();
    let mut out = Vec::with_capacity(node.child_count());
    if cursor.goto_first_child() {
        loop {
            out.push((cursor.field_name(), cursor.node()));
            if !cursor.goto_next_sibling() {
                break;
            }
        }
    }
    out
}

fn is_statement(kind: &str) -> bool {
    matches!(
        kind,
        "command"
            | "redirected_statement"
            | "pipeline"
            | "list"
            | "subshell"
            | "compound_statement"
            | "negated_command"
            | "if_statement"
            | "while_statement"
            | "for_statement"
            | "c_style_for_statement"
            | "case_statement"
            | "function_definition"
            | "variable_assignment"
            | "variable_assignments"
            | "declaration_command"
            | "unset_command"
            | "test_command"
    )
}

struct Walker<'s> {
    src: &'s str,
    script: Script,
    dir: Vec<DirStep>,
    stdin: Stdin,
    pipeline: Option<(usize, usize)>,
    depth: usize,
    /// Where the redirections of the enclosing redirected statements start.
    redirect_starts: Vec<usize>,
}

impl<'s> Walker<'s> {
    fn text(&self, node: Node<'_>) -> &'s str {
        self.src.get(node.byte_range()).unwrap_or_default()
    }

    fn enter(&mut self) -> bool {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            let problem = "the command is nested too deeply to analyse".to_owned();
            if !self.script.problems.contains(&problem) {
                self.script.problems.push(problem);
            }
            self.depth -= 1;
            return false;
        }
        true
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    /// Walks a node holding a sequence of statements (the program, `{ … }`, `( … )`, loop
    /// bodies, `if` branches), noticing statements sent to the background with `&`.
    fn walk_block(&mut self, node: Node<'_>) {
        if !self.enter() {
            return;
        }
        let children = children_with_fields(node);
        for (index, (field, child)) in children.iter().enumerate() {
            let kind = child.kind();
            if is_statement(kind) {
                let start = self.script.invocations.len();
                self.walk_statement(*child);
                let backgrounded = children
                    .get(index + 1)
                    .is_some_and(|(_, next)| !next.is_named() && next.kind() == "&");
                if backgrounded {
                    for invocation in self.script.invocations.iter_mut().skip(start) {
                        invocation.background = true;
                    }
                }
                continue;
            }
            if !child.is_named() {
                continue;
            }
            match kind {
                "comment" | "heredoc_body" | "heredoc_start" | "heredoc_end" => {}
                "do_group" | "else_clause" | "elif_clause" | "case_item" => self.walk_block(*child),
                "file_redirect" | "herestring_redirect" | "heredoc_redirect" => {
                    // `$(< file)` reads the file.
                    self.redirect(*child);
                }
                "ERROR" => self.walk_block(*child),
                _ if *field == Some("redirect") => {
                    self.redirect(*child);
                }
                _ => self.walk_nested(*child),
            }
        }
        self.leave();
    }

    fn walk_statement(&mut self, node: Node<'_>) {
        if !self.enter() {
            return;
        }
        match node.kind() {
            "command" => self.walk_command(node),
            "redirected_statement" => self.walk_redirected(node),
            "pipeline" => {
                let stages = self.pipeline_stages(node);
                self.walk_pipeline(&stages, None);
            }
            "subshell" => {
                let saved = self.dir.len();
                self.walk_block(node);
                self.dir.truncate(saved);
            }
            "function_definition" => self.walk_function(node),
            "variable_assignment" => {
                let assignment = self.assignment(node);
                self.push_invocation(InvocationKind::Command, vec![assignment], Vec::new(), None);
            }
            "variable_assignments" => {
                let mut cursor = node.walk();
                let nodes: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
                let assignments = nodes
                    .into_iter()
                    .filter(|child| child.kind() == "variable_assignment")
                    .map(|child| self.assignment(child))
                    .collect();
                self.push_invocation(InvocationKind::Command, assignments, Vec::new(), None);
            }
            "declaration_command" | "unset_command" => self.walk_declaration(node),
            "test_command" => {
                let mut words = Vec::new();
                self.flatten_test(node, &mut words);
                self.push_invocation(InvocationKind::Test, Vec::new(), words, None);
            }
            "compound_statement" if self.text(node).starts_with("((") => {
                // `(( … ))`: an arithmetic command.
                let text = self.text(node).to_owned();
                self.script.evaluations.push(Evaluation::Arithmetic(text));
                self.walk_block(node);
            }
            "c_style_for_statement" => {
                for (field, child) in children_with_fields(node) {
                    if matches!(field, Some("initializer" | "condition" | "update")) {
                        let text = self.text(child).to_owned();
                        self.script.evaluations.push(Evaluation::Arithmetic(text));
                    }
                }
                self.walk_block(node);
            }
            "for_statement" => self.walk_for(node),
            _ => self.walk_block(node),
        }
        self.leave();
    }

    /// `for NAME in WORDS; do …; done` and `select`: the loop variable and its values, then
    /// the body.
    fn walk_for(&mut self, node: Node<'_>) {
        let mut name = String::new();
        let mut values = None;
        for (field, child) in children_with_fields(node) {
            match field {
                Some("variable") => name = self.text(child).to_owned(),
                Some("value") => {
                    let word = self.word(child);
                    values.get_or_insert_with(Vec::new).push(word);
                }
                Some("body") => self.walk_block(child),
                _ if child.is_named() && child.kind() != "comment" => self.walk_nested(child),
                _ => {}
            }
        }
        self.script
            .loop_variables
            .push(LoopVariable { name, values });
    }

    fn push_invocation(
        &mut self,
        kind: InvocationKind,
        assignments: Vec<Assignment>,
        words: Vec<Word>,
        stdin: Option<Stdin>,
    ) {
        self.script.invocations.push(Invocation {
            kind,
            assignments,
            words,
            stdin: stdin.unwrap_or_else(|| self.stdin.clone()),
            dir: self.dir.clone(),
            pipeline: self.pipeline,
            background: false,
        });
    }

    fn walk_command(&mut self, node: Node<'_>) {
        let mut assignments = Vec::new();
        let mut words = Vec::new();
        let mut stdin = None;
        let children = children_with_fields(node);
        for (index, (field, child)) in children.iter().copied().enumerate() {
            match (field, child.kind()) {
                (Some("name"), _) => {
                    let word = self.command_name(child);
                    words.push(word);
                }
                (Some("argument"), _)
                    if self
                        .descriptor_name(child, children.get(index + 1))
                        .is_some() =>
                {
                    // `exec {fd}<dir`: tree-sitter reads `{fd}` as an argument.
                    let name = self.descriptor_name(child, children.get(index + 1));
                    self.script.implicit_assignments.push(ImplicitAssignment {
                        name,
                        value: None,
                        source: self.text(child).to_owned(),
                    });
                }
                (Some("argument"), _) => {
                    let word = self.word(child);
                    words.push(word);
                }
                (Some("redirect"), _) => {
                    if let Some(input) = self.redirect(child) {
                        stdin = Some(input);
                    }
                }
                (_, "variable_assignment") => {
                    let assignment = self.assignment(child);
                    assignments.push(assignment);
                }
                (_, "subshell") => self.walk_statement(child),
                (_, "comment") => {}
                _ if child.is_named() => self.walk_nested(child),
                _ => {}
            }
        }
        let step = cd_step(&words);
        self.push_invocation(InvocationKind::Command, assignments, words, stdin);
        match step {
            Some(step) if self.dir.len() < MAX_DIR_STEPS => self.dir.push(step),
            Some(_) if !matches!(self.dir.last(), Some(DirStep::Unknown)) => {
                self.dir.push(DirStep::Unknown);
            }
            Some(_) | None => {}
        }
    }

    fn flatten_test(&mut self, node: Node<'_>, words: &mut Vec<Word>) {
        if !self.enter() {
            return;
        }
        for (_, child) in children_with_fields(node) {
            match child.kind() {
                "unary_expression"
                | "binary_expression"
                | "parenthesized_expression"
                | "postfix_expression"
                | "ternary_expression" => self.flatten_test(child, words),
                "redirected_statement" => self.walk_statement(child),
                "comment" => {}
                _ if child.is_named() => {
                    let word = self.word(child);
                    words.push(word);
                }
                _ => words.push(Word::unquoted(self.text(child))),
            }
        }
        self.leave();
    }

    fn walk_function(&mut self, node: Node<'_>) {
        let name = node
            .child_by_field_name("name")
            .map(|name| self.text(name).to_owned())
            .unwrap_or_default();
        let saved_dir = self.dir.len();
        let saved_pipeline = self.pipeline.take();
        let saved_stdin = std::mem::replace(&mut self.stdin, Stdin::Inherited);
        let start = self.script.invocations.len();
        for (field, child) in children_with_fields(node) {
            match field {
                Some("body") => self.walk_statement(child),
                Some("redirect") => {
                    self.redirect(child);
                }
                _ => {}
            }
        }
        let end = self.script.invocations.len();
        self.dir.truncate(saved_dir);
        self.pipeline = saved_pipeline;
        self.stdin = saved_stdin;
        self.script.functions.push(FunctionDef {
            name,
            body: start..end,
        });
    }

    fn pipeline_stages<'t>(&self, node: Node<'t>) -> Vec<Node<'t>> {
        let mut stages = Vec::new();
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            if child.kind() == "pipeline" {
                stages.extend(self.pipeline_stages(child));
            } else if is_statement(child.kind()) {
                stages.push(child);
            }
        }
        stages
    }

    /// Walks pipeline stages; each runs in its own subshell, reading the previous one's output.
    fn walk_pipeline(&mut self, stages: &[Node<'_>], first_stdin: Option<Stdin>) {
        let index = self.script.pipelines.len();
        self.script.pipelines.push(Pipeline::default());
        let saved_stdin = self.stdin.clone();
        let saved_pipeline = self.pipeline;
        let saved_dir = self.dir.len();
        for (stage, node) in stages.iter().enumerate() {
            self.stdin = match (&first_stdin, stage) {
                (Some(input), 0) => input.clone(),
                (None, 0) => saved_stdin.clone(),
                _ => Stdin::Piped {
                    pipeline: index,
                    stage,
                },
            };
            self.pipeline = Some((index, stage));
            let start = self.script.invocations.len();
            self.walk_statement(*node);
            let end = self.script.invocations.len();
            self.dir.truncate(saved_dir);
            if let Some(pipeline) = self.script.pipelines.get_mut(index) {
                pipeline.stages.push(start..end);
            }
        }
        self.stdin = saved_stdin;
        self.pipeline = saved_pipeline;
    }
}

/// The directory change a `cd`, `pushd` or `popd` makes, if the words are one.
fn cd_step(words: &[Word]) -> Option<DirStep> {
    let name = words.first()?.literal()?;
    match name.as_str() {
        "cd" | "pushd" => {}
        "popd" => return Some(DirStep::Unknown),
        _ => return None,
    }
    let mut operands = words.iter().skip(1).filter(|word| {
        !word
            .literal()
            .is_some_and(|text| text.starts_with('-') && text != "-")
    });
    match operands.next() {
        None => Some(DirStep::Home),
        Some(word) if word.literal().as_deref() == Some("-") => Some(DirStep::Unknown),
        Some(word) => Some(DirStep::To(word.clone())),
    }
}
