//! The analysis of one command line: each simple command judged on its own, then the
//! redirections, pipelines and function definitions that join them; the worst part decides.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::evaluated::{self, Evaluations};
use super::parse::{
    DirStep, Direction, ImplicitAssignment, Invocation, InvocationKind, Redirect, Script, Stdin,
    parse_script,
};
use super::paths::{
    Places, Resolved, canonicalize_existing_prefix, is_block_device, is_harmless_device,
};
use super::word::{Piece, SubstitutionKind, Word};
use super::{
    BashAnalysis, BashContext, BashVerdict, SimpleCommand, commands, loops, names, runners,
    variables,
};

/// `bash -c` inside `bash -c` inside `eval`…: past this depth the text is not analysed.
const MAX_DEPTH: usize = 8;

/// `nice nice nice … ls`: past this many wrappers the command is not analysed.
const MAX_WRAPPERS: usize = 32;

/// Whether setting the variable changes which programs run or how (see
/// [`super::variables`]).
pub(crate) fn is_dangerous_variable(name: &str) -> bool {
    variables::is_dangerous(name)
}

pub(crate) fn analyze(command: &str, ctx: &BashContext<'_>) -> BashAnalysis {
    let mut analyzer = Analyzer {
        places: Places::new(ctx.home, ctx.workspace_roots),
        analysis: BashAnalysis {
            commands: Vec::new(),
            verdict: BashVerdict::ReadOnly,
            reasons: Vec::new(),
            outside_paths: Vec::new(),
            read_paths: Vec::new(),
            written_paths: Vec::new(),
            network: false,
            program_options: Vec::new(),
        },
        depth: 0,
        wrappers: 0,
        variables: HashMap::new(),
        evaluations: Evaluations::default(),
        exports: variables::Exports::default(),
        loops: loops::LoopValues::default(),
    };
    let cwd = canonicalize_existing_prefix(ctx.cwd);
    analyzer.analyze_text(command, Some(&cwd));
    // Judged last: a variable a loop assigns after using it counts too.
    for problem in analyzer.evaluations.problems() {
        analyzer.unanalysable(problem);
    }
    for name in analyzer.evaluations.arithmetic_assignments() {
        variables::set_in_shell(&mut analyzer, &name);
    }
    variables::judge_exports(&mut analyzer);
    loops::judge_loop_paths(&mut analyzer);
    analyzer.analysis
}

/// Where and how one command runs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Site<'s> {
    pub(crate) script: &'s Script,
    /// `None` after a `cd` whose target is known only at run time.
    pub(crate) cwd: Option<&'s Path>,
    pub(crate) stdin: &'s Stdin,
    /// `xargs` or `find -exec … +` appends arguments known only at run time.
    pub(crate) extra_args: bool,
}

#[derive(Debug)]
pub(crate) struct Analyzer {
    pub(crate) places: Places,
    analysis: BashAnalysis,
    depth: usize,
    /// How many wrappers deep `judge_argv` is.
    wrappers: usize,
    /// Shell variables assigned literal values earlier in the command line (`None` once
    /// assigned something known only at run time).
    variables: HashMap<String, Option<String>>,
    /// Every value the command line gives its variables, and the text Bash evaluates.
    pub(crate) evaluations: Evaluations,
    /// What the command line exports, judged once it has all been read.
    pub(crate) exports: variables::Exports,
    /// What `for` loops give their variables, for the paths named through them.
    pub(crate) loops: loops::LoopValues,
}

impl Analyzer {
    pub(crate) fn needs_approval(&mut self, reason: impl Into<String>) {
        self.flag(BashVerdict::NeedsApproval, reason.into());
    }

    pub(crate) fn destructive(&mut self, reason: impl Into<String>) {
        self.flag(BashVerdict::Destructive, reason.into());
    }

    pub(crate) fn unanalysable(&mut self, reason: impl Into<String>) {
        self.flag(BashVerdict::Unanalysable, reason.into());
    }

    /// Judges one command run by another (`find -exec`, `xargs`) and returns its verdict
    /// alone; the analysis as a whole takes it in as usual.
    pub(crate) fn judge_part(&mut self, words: &[Word], site: Site<'_>) -> BashVerdict {
        let before = std::mem::replace(&mut self.analysis.verdict, BashVerdict::ReadOnly);
        self.judge_argv(words, site);
        let part = self.analysis.verdict;
        self.analysis.verdict = before.max(part);
        part
    }

    fn flag(&mut self, verdict: BashVerdict, reason: String) {
        self.analysis.verdict = self.analysis.verdict.max(verdict);
        if !self.analysis.reasons.contains(&reason) {
            self.analysis.reasons.push(reason);
        }
    }

    pub(crate) fn uses_network(&mut self, what: &str) {
        self.analysis.network = true;
        self.needs_approval(format!("`{what}` uses the network"));
    }

    /// An option that makes `command` run another program: not read-only, and lifted only by
    /// an allow rule that names the option (see [`BashAnalysis::program_options`]).
    pub(crate) fn runs_program(&mut self, command: &str, written: &str, canonical: &str) {
        let shown = if written == canonical {
            written.to_owned()
        } else {
            format!("{written} (that is, {canonical})")
        };
        self.needs_approval(format!("`{command} {shown}` runs another program"));
        let option = super::ProgramOption {
            command: command.to_owned(),
            written: written.to_owned(),
            canonical: canonical.to_owned(),
        };
        if !self.analysis.program_options.contains(&option) {
            self.analysis.program_options.push(option);
        }
    }

    pub(crate) fn not_read_only(&mut self, name: &str) {
        self.needs_approval(format!("`{name}` is not a known read-only command"));
    }

    fn outside(&mut self, path: PathBuf) {
        if !self.analysis.outside_paths.contains(&path) {
            self.analysis.outside_paths.push(path);
        }
    }

    /// Adds a simple command to the analysis's list.
    pub(crate) fn record(&mut self, words: &[Word]) {
        if words.is_empty() {
            return;
        }
        let argv = words.iter().map(Word::display).collect();
        self.analysis.commands.push(SimpleCommand::new(argv));
    }

    /// A file the command reads. A glob is expanded and each match judged; a path known only
    /// at run time may be anywhere (`~/.ssh/id_rsa`), so no rule can vouch for it.
    pub(crate) fn read_path(&mut self, word: &Word, site: Site<'_>) {
        if let Some(words) = loops::substitute(self, word, site) {
            for word in &words {
                self.read_path(word, site);
            }
            return;
        }
        if let Some(matches) = super::globs::matches(self, word, site) {
            for path in &matches {
                self.read_path(path, site);
            }
            return;
        }
        match self.places.resolve(word, site.cwd) {
            Resolved::Stream => {}
            Resolved::Unknown(unknown) => {
                self.unanalysable(format!("reads a path not known until run time ({unknown})"));
            }
            Resolved::Path(path) => {
                if is_harmless_device(&path) {
                    return;
                }
                push_unique(&mut self.analysis.read_paths, &path);
                if self.places.is_inside_workspace(&path) {
                    return;
                }
                self.needs_approval(format!("reads {} outside the workspace", path.display()));
                self.outside(path);
            }
        }
    }

    /// A file the command creates or changes.
    pub(crate) fn write_path(&mut self, word: &Word, site: Site<'_>) {
        self.write_path_as(word, site, "writes to");
    }

    /// A file the command changes in the way `verb` says ("removes", "changes the mode of").
    /// Globs and paths known only at run time are judged as in [`Analyzer::read_path`].
    pub(crate) fn write_path_as(&mut self, word: &Word, site: Site<'_>, verb: &str) {
        if let Some(words) = loops::substitute(self, word, site) {
            for word in &words {
                self.write_path_as(word, site, verb);
            }
            return;
        }
        if let Some(matches) = super::globs::matches(self, word, site) {
            for path in &matches {
                self.write_path_as(path, site, verb);
            }
            return;
        }
        match self.places.resolve(word, site.cwd) {
            Resolved::Stream => {}
            Resolved::Unknown(unknown) => {
                self.unanalysable(format!(
                    "{verb} a path not known until run time ({unknown})"
                ));
            }
            Resolved::Path(path) => {
                if is_harmless_device(&path) {
                    return;
                }
                push_unique(&mut self.analysis.written_paths, &path);
                if is_block_device(&path) {
                    self.destructive(format!("writes to the device {}", path.display()));
                    self.outside(path);
                } else if self.places.is_inside_workspace(&path) {
                    self.needs_approval(format!("{verb} {}", word.display()));
                } else {
                    self.needs_approval(format!("{verb} {} outside the workspace", path.display()));
                    self.outside(path);
                }
            }
        }
    }

    /// An argument of a command this analysis does not know, checked only when it plainly
    /// names a path outside the workspace.
    pub(crate) fn argument_path(&mut self, name: &str, word: &Word, site: Site<'_>) {
        let candidate = match word.literal_prefix().split_once('=') {
            Some((option, _)) if option.starts_with('-') => word.without_prefix(option.len() + 1),
            _ => Some(word.clone()),
        };
        let Some(candidate) = candidate else {
            return;
        };
        let prefix = candidate.literal_prefix();
        let starts_like_path = prefix.starts_with('/')
            || prefix.starts_with('~')
            || prefix == ".."
            || prefix.starts_with("../")
            || prefix.contains("/../")
            || (prefix.is_empty() && candidate.first_unknown().as_deref() == Some("$HOME"));
        if !starts_like_path {
            return;
        }
        if let Resolved::Path(path) = self.places.resolve(&candidate, site.cwd) {
            if is_harmless_device(&path) || self.places.is_inside_workspace(&path) {
                return;
            }
            self.needs_approval(format!(
                "passes {} (outside the workspace) to `{name}`",
                path.display()
            ));
            self.outside(path);
        }
    }

    /// Analyses shell text that a command runs (`bash -c`, `eval`, a script piped into a
    /// shell), as if it were part of this command line.
    pub(crate) fn analyze_nested(&mut self, text: &str, site: Site<'_>) {
        if self.depth >= MAX_DEPTH {
            self.unanalysable("the command nests shells too deeply to analyse");
            return;
        }
        self.depth += 1;
        self.analyze_text(text, site.cwd);
        self.depth -= 1;
    }

    fn analyze_text(&mut self, text: &str, cwd: Option<&Path>) {
        let script = parse_script(text);
        // What the parser could not read may hide a second command: no rule vouches for it.
        for problem in &script.problems {
            self.unanalysable(problem.clone());
        }
        self.evaluations.learn(&script);
        for function in &script.functions {
            names::function_defined(self, &function.name);
        }
        for variable in &script.loop_variables {
            names::variable_set(self, &variable.name);
            self.loops.learn(variable);
        }
        for implicit in &script.implicit_assignments {
            self.judge_implicit(implicit);
        }
        for invocation in &script.invocations {
            let dir = self.resolve_dir(cwd, &invocation.dir);
            let site = Site {
                script: &script,
                cwd: dir.as_deref(),
                stdin: &invocation.stdin,
                extra_args: false,
            };
            self.judge_assignments(invocation, &script);
            let words: Vec<Word> = invocation
                .words
                .iter()
                .flat_map(Word::brace_expand)
                .collect();
            match invocation.kind {
                InvocationKind::Test => {
                    self.record(&words);
                    evaluated::judge_test(self, &words);
                }
                InvocationKind::Declaration => {
                    self.record(&words);
                    super::declarations::judge_declaration(self, &words);
                }
                InvocationKind::Command => {
                    self.record(&words);
                    self.judge_argv(&words, site);
                }
            }
        }
        for redirect in &script.redirects {
            let dir = self.resolve_dir(cwd, &redirect.dir);
            let site = Site {
                script: &script,
                cwd: dir.as_deref(),
                stdin: &Stdin::Inherited,
                extra_args: false,
            };
            self.judge_redirect(redirect, site);
        }
        self.find_fork_bombs(&script);
    }

    /// The `NAME=value` words of one invocation: exported to the command they prefix, set in
    /// the shell when they stand alone; a declaration's are judged with its options.
    fn judge_assignments(&mut self, invocation: &Invocation, script: &Script) {
        for assignment in &invocation.assignments {
            match invocation.kind {
                InvocationKind::Declaration | InvocationKind::Test => {}
                InvocationKind::Command if invocation.words.is_empty() => {
                    let value = assignment.value.literal();
                    variables::set_in_shell_to(self, &assignment.name, value.as_deref());
                }
                InvocationKind::Command => {
                    let command = invocation.words.first().and_then(Word::literal);
                    let value = assignment.value.literal();
                    variables::prefixed(
                        self,
                        &assignment.name,
                        value.as_deref(),
                        command.as_deref(),
                    );
                }
            }
        }
        if invocation.words.is_empty() || invocation.kind == InvocationKind::Declaration {
            for assignment in &invocation.assignments {
                let value = self.static_value(&assignment.value, script);
                self.variables.insert(assignment.name.clone(), value);
            }
        }
    }

    /// `${NAME:=value}`, `${NAME=value}` and `{NAME}<file` assign NAME as `NAME=value` would.
    fn judge_implicit(&mut self, implicit: &ImplicitAssignment) {
        let Some(name) = &implicit.name else {
            self.unanalysable(format!(
                "`{}` assigns the variable whose name another variable holds, known only at run time",
                implicit.source
            ));
            return;
        };
        variables::set_in_shell_to(self, name, implicit.value.as_deref());
        let held = self
            .variables
            .get(name)
            .is_some_and(|value| value.as_deref().is_some_and(|text| !text.is_empty()));
        if !held {
            self.variables.insert(name.clone(), implicit.value.clone());
        }
    }

    fn resolve_dir(&self, cwd: Option<&Path>, steps: &[DirStep]) -> Option<PathBuf> {
        let mut dir = cwd.map(Path::to_path_buf);
        for step in steps {
            dir = match step {
                DirStep::To(word) => self.places.change_dir(dir.as_deref(), word),
                DirStep::Home => Some(self.places.home.clone()),
                DirStep::Unknown => None,
            };
        }
        dir
    }

    fn judge_redirect(&mut self, redirect: &Redirect, site: Site<'_>) {
        match redirect.direction {
            Direction::Read => self.read_path(&redirect.target, site),
            Direction::Write => self.write_path(&redirect.target, site),
        }
    }

    /// Judges one simple command given as words (the name first).
    pub(crate) fn judge_argv(&mut self, words: &[Word], site: Site<'_>) {
        if self.wrappers >= MAX_WRAPPERS {
            self.unanalysable("the command wraps too many commands to analyse");
            return;
        }
        self.wrappers += 1;
        self.judge_words(words, site);
        self.wrappers -= 1;
    }

    fn judge_words(&mut self, words: &[Word], site: Site<'_>) {
        let Some((name_word, args)) = words.split_first() else {
            return;
        };
        let Some(written_name) = name_word.literal() else {
            let reason = match name_word
                .substitutions()
                .find(|(_, kind, _)| *kind == SubstitutionKind::Command)
            {
                Some((source, _, _)) => format!(
                    "command substitution {source} runs a command whose name is not known until run time"
                ),
                None => format!(
                    "the command name {} is not known until run time",
                    name_word.display()
                ),
            };
            self.needs_approval(reason);
            if let Some(value) = self.static_value(name_word, site.script) {
                // `$(echo rm) -rf ~`: the substitution's output is known, so judge what runs.
                let mut resolved: Vec<Word> =
                    value.split_whitespace().map(Word::unquoted).collect();
                if !resolved.is_empty() {
                    resolved.extend(args.iter().cloned());
                    self.record(&resolved);
                    self.judge_argv(&resolved, site);
                    return;
                }
            }
            for arg in args {
                self.argument_path("the command", arg, site);
            }
            return;
        };
        if site.script.defines_function(&written_name) {
            // The function's body is judged where it is defined.
            return;
        }
        let name = program_name(&written_name);
        names::judge(self, name, args);
        evaluated::judge(self, name, args);
        if runners::judge(self, name, args, site) {
            return;
        }
        commands::judge(self, name, args, site);
    }

    /// `:(){ :|:& };:` and its renamed variants: a function that starts copies of itself.
    fn find_fork_bombs(&mut self, script: &Script) {
        for function in &script.functions {
            let calls: Vec<_> = script
                .invocations
                .get(function.body.clone())
                .unwrap_or_default()
                .iter()
                .filter(|invocation| {
                    invocation
                        .words
                        .first()
                        .and_then(Word::literal)
                        .is_some_and(|name| name == function.name)
                })
                .collect();
            let forks = calls
                .iter()
                .any(|invocation| invocation.background || invocation.pipeline.is_some());
            if calls.len() >= 2 && forks {
                self.destructive(format!(
                    "fork bomb: the function {} starts copies of itself until the machine runs out of processes",
                    function.name
                ));
            }
        }
    }

    /// What feeds a command's standard input, when that is a download (`curl … | sh`).
    pub(crate) fn downloader_upstream(&self, site: Site<'_>) -> Option<String> {
        let Stdin::Piped { pipeline, stage } = *site.stdin else {
            return None;
        };
        let pipeline = site.script.pipelines.get(pipeline)?;
        pipeline
            .stages
            .iter()
            .take(stage)
            .flat_map(|range| {
                site.script
                    .invocations
                    .get(range.clone())
                    .unwrap_or_default()
            })
            .find_map(|invocation| downloader_name(&invocation.words))
    }

    /// The literal shell text a command reads on standard input, when it is known: a
    /// here-document, a here-string, or `echo`/`printf`/`cat <<EOF` piped in.
    pub(crate) fn stdin_text(&self, site: Site<'_>) -> Option<String> {
        match site.stdin {
            Stdin::Heredoc { body } => body.clone(),
            Stdin::HereString(word) => word.literal(),
            Stdin::Piped { pipeline, stage } => {
                let pipeline = site.script.pipelines.get(*pipeline)?;
                let previous = pipeline.stages.get(stage.checked_sub(1)?)?;
                let [invocation] = site.script.invocations.get(previous.clone())? else {
                    return None;
                };
                let words: Vec<String> = invocation
                    .words
                    .iter()
                    .map(Word::literal)
                    .collect::<Option<_>>()?;
                match words.first().map(String::as_str) {
                    Some("echo" | "printf") => Some(words.get(1..)?.join(" ")),
                    Some("cat") if words.len() == 1 => match &invocation.stdin {
                        Stdin::Heredoc { body } => body.clone(),
                        _ => None,
                    },
                    _ => None,
                }
            }
            Stdin::Inherited | Stdin::File(_) => None,
        }
    }

    /// A download inside a word's substitutions (`bash -c "$(curl …)"`, `source <(wget …)`).
    pub(crate) fn downloader_in_word(&self, word: &Word, site: Site<'_>) -> Option<String> {
        word.substitutions().find_map(|(_, _, inner)| {
            site.script
                .invocations
                .get(inner)
                .unwrap_or_default()
                .iter()
                .find_map(|invocation| downloader_name(&invocation.words))
        })
    }

    /// The literal text `name` was last assigned, when it was.
    pub(crate) fn literal_value(&self, name: &str) -> Option<String> {
        self.variables.get(name)?.clone()
    }

    /// The value of a word whose variables were assigned literal text earlier and whose
    /// substitutions only echo literal text (`$(echo rm)`).
    fn static_value(&self, word: &Word, script: &Script) -> Option<String> {
        let mut value = String::new();
        for piece in word.pieces() {
            match piece {
                Piece::Text { text, .. } => value.push_str(text),
                Piece::Variable(name) => value.push_str(self.variables.get(name)?.as_deref()?),
                Piece::Substitution { kind, inner, .. } => {
                    if *kind != SubstitutionKind::Command {
                        return None;
                    }
                    let [invocation] = script.invocations.get(inner.clone())? else {
                        return None;
                    };
                    let words: Vec<String> = invocation
                        .words
                        .iter()
                        .map(Word::literal)
                        .collect::<Option<_>>()?;
                    let (name, args) = words.split_first()?;
                    if name != "echo" || args.iter().any(|arg| arg.starts_with('-')) {
                        return None;
                    }
                    value.push_str(&args.join(" "));
                }
            }
        }
        Some(value)
    }
}

/// The program a command name runs: `/usr/bin/rm` is `rm`, but `./rm` is a local file.
pub(crate) fn program_name(name: &str) -> &str {
    const SYSTEM_DIRS: &[&str] = &[
        "/bin/",
        "/usr/bin/",
        "/usr/local/bin/",
        "/sbin/",
        "/usr/sbin/",
        "/usr/local/sbin/",
        "/opt/homebrew/bin/",
    ];
    SYSTEM_DIRS
        .iter()
        .find_map(|dir| name.strip_prefix(dir))
        .filter(|rest| !rest.contains('/'))
        .unwrap_or(name)
}

/// Programs that fetch data from the network and print it.
const DOWNLOADERS: &[&str] = &[
    "curl",
    "wget",
    "fetch",
    "aria2c",
    "http",
    "https",
    "xh",
    "lwp-request",
    "GET",
];

/// The downloader run by these words, looking through wrappers such as `sudo` and `env`.
fn downloader_name(words: &[Word]) -> Option<String> {
    const WRAPPERS: &[&str] = &[
        "sudo", "doas", "env", "command", "builtin", "nice", "nohup", "time", "timeout", "exec",
    ];
    for word in words {
        let text = word.literal()?;
        let name = program_name(&text);
        if DOWNLOADERS.contains(&name) {
            return Some(name.to_owned());
        }
        let skip = WRAPPERS.contains(&name)
            || text.starts_with('-')
            || text.contains('=')
            || text.chars().all(|c| c.is_ascii_digit() || c == '.');
        if !skip {
            return None;
        }
    }
    None
}

fn push_unique(paths: &mut Vec<PathBuf>, path: &Path) {
    if !paths.iter().any(|known| known == path) {
        paths.push(path.to_path_buf());
    }
}
