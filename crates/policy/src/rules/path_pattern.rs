//! The specifier of a Read or Edit rule: a gitignore-style glob anchored at a directory.
//!
//! | written          | anchored at                                   | example                |
//! |------------------|-----------------------------------------------|------------------------|
//! | `//path`         | the filesystem root                           | `Read(//etc/**)`       |
//! | `~/path`         | the home directory                            | `Read(~/.ssh/**)`      |
//! | `/path`          | the rule's [`RuleOrigin::base_dir`]           | `Edit(/src/**/*.ts)`   |
//! | `path`, `./path` | the working directory ([`CallFacts::cwd`])    | `Read(./.env)`         |
//!
//! `*` and `?` stay within one path segment, `**` crosses segments, `[a-z]` and `{a,b}` work as
//! in globset. As in gitignore, what a pattern matches may be a directory, covering everything
//! inside it (`Read(secrets)` covers `secrets/key`; a deny `Read(src/*)` covers `src/a/b`); an
//! allow rule takes only a literal last segment as a directory, so an allow `Edit(src/*)` covers
//! `src/a.rs` but not `src/a/b.rs`. `dir/**` also covers `dir` itself (a Grep rooted there). As in
//! gitignore, a relative pattern without a slash (`*.env`, `.env`) matches at any depth under
//! the working directory; one with a slash is anchored there, except that, as in Claude Code, a
//! deny or ask rule of the form `dir/**` still matches a `dir` at any depth (an allow rule of
//! that form covers only `<cwd>/dir`). Leading `../` climbs from the working directory.
//!
//! [`RuleOrigin::base_dir`]: super::RuleOrigin::base_dir
//! [`CallFacts::cwd`]: super::CallFacts::cwd

use std::path::{Component, Path, PathBuf};

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use super::RuleKind;

/// Where a path pattern is anchored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PathRoot {
    Filesystem,
    Home,
    SettingsDir,
    WorkingDir,
}

/// The directories a call's paths are judged against, already normalised.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Anchors<'a> {
    pub(crate) home: &'a Path,
    pub(crate) cwd: &'a Path,
    pub(crate) base_dir: &'a Path,
}

/// A compiled Read or Edit specifier.
#[derive(Debug, Clone)]
pub(crate) struct PathPattern {
    root: PathRoot,
    /// How many directories to climb from the root first (`../shared/**`).
    up: usize,
    /// The glob below the anchor, without leading or trailing slashes; empty for the anchor
    /// itself and everything in it (`~`).
    glob: String,
    matcher: Matcher,
}

/// How a pattern is matched below its anchor.
#[derive(Debug, Clone)]
enum Matcher {
    /// A pattern without glob characters (`src/dir`, `secrets/**`, or none at all): that
    /// path and everything beneath it, found by comparing segments. Most rules are of this
    /// form, and compiling a glob set for each made 100,000 rules take most of a second.
    Literal {
        segments: Vec<String>,
        /// Whether the segments may start at any depth (`.env`, a deny `secrets/**`).
        any_depth: bool,
    },
    Globs(GlobSet),
}

impl Matcher {
    /// Whether the segments of a path below the anchor (at least one) match.
    fn is_match(&self, below: &[String]) -> bool {
        match self {
            Matcher::Literal { segments, .. } if segments.is_empty() => true,
            Matcher::Literal {
                segments,
                any_depth: false,
            } => below.starts_with(segments),
            Matcher::Literal {
                segments,
                any_depth: true,
            } => below
                .windows(segments.len())
                .any(|window| window == segments),
            Matcher::Globs(globs) => globs.is_match(below.join("/")),
        }
    }
}

/// Which matcher [`PathPattern::parse_with`] may build.
#[derive(Debug, Clone, Copy)]
enum Matching {
    /// Segment comparison where the pattern allows it, else a glob set.
    Fastest,
    /// Always a glob set: what the fast path is checked against.
    #[cfg(test)]
    GlobsOnly,
}

/// Whether a segment has none of the characters globset treats specially.
fn is_literal(segment: &str) -> bool {
    !segment.contains(['*', '?', '[', ']', '{', '}', '\\'])
}

impl PathPattern {
    /// Reads a specifier. The rule's kind matters for `dir/**` (see the module docs).
    pub(crate) fn parse(spec: &str, kind: RuleKind) -> Result<PathPattern, String> {
        PathPattern::parse_with(spec, kind, Matching::Fastest)
    }

    fn parse_with(spec: &str, kind: RuleKind, matching: Matching) -> Result<PathPattern, String> {
        let (root, mut rest, mut anchored) = if let Some(rest) = spec.strip_prefix("//") {
            (PathRoot::Filesystem, rest, true)
        } else if spec == "~" {
            (PathRoot::Home, "", true)
        } else if let Some(rest) = spec.strip_prefix("~/") {
            (PathRoot::Home, rest, true)
        } else if spec.starts_with('~') {
            return Err(
                "only `~/` is supported for the home directory (not `~user`); write e.g. \
                 `~/.ssh/**`"
                    .to_owned(),
            );
        } else if let Some(rest) = spec.strip_prefix('/') {
            (PathRoot::SettingsDir, rest, true)
        } else {
            (PathRoot::WorkingDir, spec, false)
        };

        let mut up = 0;
        loop {
            if let Some(after) = rest.strip_prefix("./") {
                rest = after;
            } else if rest == "." {
                rest = "";
            } else if root == PathRoot::WorkingDir && (rest == ".." || rest.starts_with("../")) {
                up += 1;
                rest = rest.get(3..).unwrap_or("");
            } else {
                break;
            }
            anchored = true;
        }

        let segments: Vec<&str> = rest.split('/').filter(|s| !s.is_empty()).collect();
        if segments.iter().any(|s| *s == "." || *s == "..") {
            return Err(format!(
                "`{spec}` has a `.` or `..` segment inside it; `./` and `../` are only supported \
                 at the start of a relative pattern"
            ));
        }
        let glob = segments.join("/");

        let mut patterns = Vec::new();
        let mut any_depth = false;
        if glob.is_empty() {
            patterns.push("**".to_owned());
        } else {
            patterns.push(glob.clone());
            // gitignore: what a pattern matches may be a directory, and its contents go with
            // it. For allow rules only a literal last segment is taken as a directory, so that
            // `Edit(src/*)` allows `src/a.rs` but not `src/a/b.rs`.
            let last_is_literal = !segments
                .last()
                .is_some_and(|s| s.contains(['*', '?', '[', '{']));
            if kind != RuleKind::Allow || last_is_literal {
                patterns.push(format!("{glob}/**"));
            }
            if let Some(dir) = glob.strip_suffix("/**") {
                patterns.push(dir.to_owned());
            }
            let single_segment_dir = glob
                .strip_suffix("/**")
                .is_some_and(|dir| !dir.contains('/'));
            any_depth = !anchored
                && (!glob.contains('/') || (single_segment_dir && kind != RuleKind::Allow));
            if any_depth {
                let deep: Vec<String> = patterns.iter().map(|p| format!("**/{p}")).collect();
                patterns.extend(deep);
            }
        }

        // `L`, `L/**` and `L/**/**` with `L` literal all come to "L and what is beneath it",
        // and with their `**/` forms to "L at any depth": no glob set needed.
        let literal = match segments.split_last() {
            Some((&"**", dir)) if !dir.is_empty() => Some(dir),
            Some(_) => Some(segments.as_slice()),
            None => Some(&[][..]),
        }
        .filter(|literal| {
            matches!(matching, Matching::Fastest)
                && literal.iter().all(|segment| is_literal(segment))
        });
        let matcher = match literal {
            Some(literal) => Matcher::Literal {
                segments: literal
                    .iter()
                    .map(|segment| (*segment).to_owned())
                    .collect(),
                any_depth,
            },
            None => Matcher::Globs(compile(spec, &patterns)?),
        };
        Ok(PathPattern {
            root,
            up,
            glob,
            matcher,
        })
    }

    /// Whether a normalised absolute path is one of the pattern's.
    pub(crate) fn matches(&self, path: &Path, anchors: Anchors<'_>) -> bool {
        let mut anchor = match self.root {
            PathRoot::Filesystem => PathBuf::from("/"),
            PathRoot::Home => anchors.home.to_path_buf(),
            PathRoot::SettingsDir => anchors.base_dir.to_path_buf(),
            PathRoot::WorkingDir => anchors.cwd.to_path_buf(),
        };
        for _ in 0..self.up {
            anchor.pop();
        }
        let Ok(below) = path.strip_prefix(&anchor) else {
            return false;
        };
        if below.as_os_str().is_empty() {
            return self.glob.is_empty() || self.glob == "**";
        }
        let below: Vec<String> = below
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        self.matcher.is_match(&below)
    }
}

/// The glob set for a pattern's globs (see [`PathPattern::parse`]).
fn compile(spec: &str, patterns: &[String]) -> Result<GlobSet, String> {
    let mut set = GlobSetBuilder::new();
    for pattern in patterns {
        let glob = GlobBuilder::new(pattern)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|e| format!("`{spec}` is not a valid glob: {}", e.kind()))?;
        set.add(glob);
    }
    set.build()
        .map_err(|e| format!("`{spec}` is not a valid glob: {e}"))
}

/// How much of a [`Rule::read_deny_prefix`](super::Rule::read_deny_prefix) path its rule
/// denies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrefixReach {
    /// The path and everything beneath it: `~/.ssh/**`, `//etc/shadow`, `../secrets`.
    Whole,
    /// Only some of what lies beneath it: `~/.ssh/*.pub` gives `~/.ssh`, `**/.env` the
    /// working directory.
    Part,
}

impl PathPattern {
    /// The longest literal path the pattern starts with (the anchor, then every segment
    /// before the first one with a glob character), and whether the pattern covers all of it.
    fn literal_prefix(&self, anchors: Anchors<'_>) -> (PathBuf, PrefixReach) {
        let mut path = match self.root {
            PathRoot::Filesystem => PathBuf::from("/"),
            PathRoot::Home => anchors.home.to_path_buf(),
            PathRoot::SettingsDir => anchors.base_dir.to_path_buf(),
            PathRoot::WorkingDir => anchors.cwd.to_path_buf(),
        };
        for _ in 0..self.up {
            path.pop();
        }
        let mut rest = self.glob.split('/').filter(|s| !s.is_empty()).peekable();
        while let Some(segment) = rest.next_if(|s| !s.contains(['*', '?', '[', '{', '\\'])) {
            path.push(segment);
        }
        let rest: Vec<&str> = rest.collect();
        let reach = match rest.as_slice() {
            [] | ["**"] => PrefixReach::Whole,
            _ => PrefixReach::Part,
        };
        (path, reach)
    }
}

impl super::Rule {
    /// For a `Read(…)` deny rule, the path the sandbox can hide in its place: the longest
    /// literal path its pattern starts with, anchored as the rule is (`~/.ssh/**` gives
    /// `<home>/.ssh`, `./.env` `<cwd>/.env`, `//etc/shadow` itself, `/secrets/**` the rule's
    /// [`RuleOrigin::base_dir`](super::RuleOrigin::base_dir)`/secrets`), and how much of that
    /// path the rule denies. `None` for every other rule, and for `Read` without a pattern.
    ///
    /// A pattern that may match at any depth (`.env`, `secrets/**`) gives its match directly
    /// in the working directory, the only one with a literal path.
    ///
    /// ```
    /// use std::path::{Path, PathBuf};
    /// use cairn_policy::rules::{PrefixReach, Rule, RuleKind, RuleOrigin};
    ///
    /// let rule = Rule::parse(RuleKind::Deny, "Read(~/.ssh/**)", RuleOrigin::new("test", "/p"))
    ///     .unwrap();
    /// assert_eq!(
    ///     rule.read_deny_prefix(Path::new("/home/me"), Path::new("/p")),
    ///     Some((PathBuf::from("/home/me/.ssh"), PrefixReach::Whole))
    /// );
    /// ```
    pub fn read_deny_prefix(&self, home: &Path, cwd: &Path) -> Option<(PathBuf, PrefixReach)> {
        let super::Specifier::Path(pattern) = &self.specifier else {
            return None;
        };
        if self.kind != RuleKind::Deny || self.tools.name() != Some("Read") {
            return None;
        }
        let home = normalize(home, Path::new("/"));
        let cwd = normalize(cwd, Path::new("/"));
        let base_dir = normalize(&self.origin.base_dir, &cwd);
        Some(pattern.literal_prefix(Anchors {
            home: &home,
            cwd: &cwd,
            base_dir: &base_dir,
        }))
    }
}

/// `path` made absolute against `cwd`, with `.` and `..` resolved by name (no filesystem
/// access), so that `src/../.env` is judged as `.env`.
pub(crate) fn normalize(path: &Path, cwd: &Path) -> PathBuf {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    };
    let mut normal = PathBuf::new();
    for component in joined.components() {
        match component {
            Component::Prefix(_) | Component::RootDir | Component::Normal(_) => {
                normal.push(component.as_os_str());
            }
            Component::CurDir => {}
            Component::ParentDir => {
                normal.pop();
            }
        }
    }
    normal
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::normalize;

    #[test]
    fn literal_patterns_match_exactly_what_their_glob_sets_match() {
        use super::{Anchors, Matcher, Matching, PathPattern};
        use crate::rules::RuleKind;

        let specs = [
            "src",
            "src/dir",
            "src/dir/**",
            "./src/**",
            ".env",
            "secrets/**",
            "//etc/shadow",
            "//etc/**",
            "~/.ssh",
            "~/.ssh/**",
            "~",
            "//",
            ".",
            "/base/x/**",
            "../shared/**",
            "a.b/c-d",
            "**",
            "src/*",
            "src/**/x",
        ];
        let paths = [
            "/p/work/src",
            "/p/work/src/a.rs",
            "/p/work/src/dir",
            "/p/work/src/dir/x/y",
            "/p/work/lib/src",
            "/p/work/lib/src/dir/z",
            "/p/work/.env",
            "/p/work/a/.env",
            "/p/work/a/.env/x",
            "/p/work/secrets",
            "/p/work/x/secrets/k",
            "/etc/shadow",
            "/etc/passwd",
            "/home/me/.ssh/id_rsa",
            "/home/me/x/.ssh",
            "/base/x/y",
            "/p/shared/k",
            "/p/work/a.b/c-d/e",
            "/p/work/srcx",
            "/p/work/x/src/dir",
        ];
        let anchors = Anchors {
            home: Path::new("/home/me"),
            cwd: Path::new("/p/work"),
            base_dir: Path::new("/base"),
        };
        let mut literal = 0;
        for kind in [RuleKind::Allow, RuleKind::Deny, RuleKind::Ask] {
            for spec in specs {
                let fast = PathPattern::parse_with(spec, kind, Matching::Fastest).unwrap();
                let globs = PathPattern::parse_with(spec, kind, Matching::GlobsOnly).unwrap();
                literal += usize::from(matches!(fast.matcher, Matcher::Literal { .. }));
                for path in paths {
                    let path = Path::new(path);
                    assert_eq!(
                        fast.matches(path, anchors),
                        globs.matches(path, anchors),
                        "{kind:?} {spec} on {}",
                        path.display()
                    );
                }
            }
        }
        assert_eq!(literal, 3 * 16, "every spec but the last three is literal");
    }

    #[test]
    fn normalize_resolves_dots_by_name() {
        let cwd = Path::new("/p/q");
        let got: Vec<PathBuf> = ["/p/src/../.env", "a/./b", "../../../x", "/"]
            .iter()
            .map(|p| normalize(Path::new(p), cwd))
            .collect();
        pretty_assertions::assert_eq!(
            got,
            vec![
                PathBuf::from("/p/.env"),
                PathBuf::from("/p/q/a/b"),
                PathBuf::from("/x"),
                PathBuf::from("/"),
            ]
        );
    }

    #[test]
    fn a_read_deny_rule_gives_its_literal_prefix_anchored_as_the_rule_is() {
        use super::PrefixReach::{Part, Whole};
        use crate::rules::{Rule, RuleKind, RuleOrigin};

        let prefix = |kind, text: &str| {
            let origin = RuleOrigin::new("/p/.claude/settings.json", "/settings/base");
            Rule::parse(kind, text, origin)
                .unwrap()
                .read_deny_prefix(Path::new("/home/me"), Path::new("/p/work"))
                .map(|(path, reach)| (path.display().to_string(), reach))
        };
        let deny = |text: &str| prefix(RuleKind::Deny, text);
        let cases = [
            ("Read(~/.ssh/**)", Some(("/home/me/.ssh", Whole))),
            ("Read(~/.ssh)", Some(("/home/me/.ssh", Whole))),
            ("Read(~/.ssh/*.pub)", Some(("/home/me/.ssh", Part))),
            ("Read(~/.aws/credentials*)", Some(("/home/me/.aws", Part))),
            ("Read(~)", Some(("/home/me", Whole))),
            ("Read(./.env)", Some(("/p/work/.env", Whole))),
            ("Read(.env)", Some(("/p/work/.env", Whole))),
            ("Read(secrets/**)", Some(("/p/work/secrets", Whole))),
            ("Read(**/.env)", Some(("/p/work", Part))),
            ("Read(../shared/keys/**)", Some(("/p/shared/keys", Whole))),
            ("Read(//etc/shadow)", Some(("/etc/shadow", Whole))),
            ("Read(//abs/**)", Some(("/abs", Whole))),
            ("Read(//srv/a/**/key)", Some(("/srv/a", Part))),
            ("Read(//**/id_rsa)", Some(("/", Part))),
            ("Read(/secrets/**)", Some(("/settings/base/secrets", Whole))),
            ("Read(//opt/[ab]/x)", Some(("/opt", Part))),
            ("Read", None),
            ("Edit(~/.ssh/**)", None),
            ("Bash(cat:*)", None),
        ];
        let got: Vec<_> = cases.iter().map(|(text, _)| deny(text)).collect();
        let want: Vec<_> = cases
            .iter()
            .map(|(_, want)| want.map(|(path, reach)| (path.to_owned(), reach)))
            .collect();
        pretty_assertions::assert_eq!(got, want);
        assert_eq!(prefix(RuleKind::Allow, "Read(~/.ssh/**)"), None);
        assert_eq!(prefix(RuleKind::Ask, "Read(~/.ssh/**)"), None);
    }
}
