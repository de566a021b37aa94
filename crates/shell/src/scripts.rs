//! Commands whose argument is a program in a small language of its own: sed scripts, awk
//! programs, jq filters. Such a command is read-only only when its program is.

use super::classify::{Analyzer, Site};
use super::options::{OptionSpec, parse_args};
use super::word::Word;

/// `awk`: its programs can run commands (`system`, `|`) and write files (`print >`).
pub(crate) fn awk(an: &mut Analyzer, name: &str, args: &[Word], site: Site<'_>) {
    an.needs_approval(format!(
        "`{name}` programs can run commands and write files"
    ));
    for arg in args {
        an.argument_path(name, arg, site);
    }
}

/// `sed`: read-only unless it edits in place or its script writes files or runs commands.
pub(crate) fn sed(an: &mut Analyzer, args: &[Word], site: Site<'_>) {
    let parsed = parse_args(
        args,
        OptionSpec {
            with_value: &["-e", "--expression", "-f", "--file", "-l", "--line-length"],
            stop_at_operand: false,
        },
    );
    for file in parsed.values(&["-f", "--file"]) {
        an.read_path(file, site);
    }
    let in_place = parsed
        .options
        .iter()
        .any(|option| option.name == "-i" || option.name.starts_with("--in-place"));
    let given = parsed.has(&["-e", "--expression", "-f", "--file"]);
    let mut scripts: Vec<&Word> = parsed.values(&["-e", "--expression"]).collect();
    if !given {
        scripts.extend(parsed.operands.first());
    }
    for script in scripts {
        match script.literal() {
            Some(text) if sed_script_is_safe(&text) => {}
            Some(_) => {
                an.needs_approval("the sed script writes files or runs commands (w, W or e)")
            }
            None => an.needs_approval("the sed script is not known until run time"),
        }
    }
    for file in parsed.operands.iter().skip(usize::from(!given)) {
        if in_place {
            an.write_path(file, site);
        } else {
            an.read_path(file, site);
        }
    }
    if in_place && (parsed.operands.len() <= usize::from(!given) || site.extra_args) {
        an.needs_approval("`sed -i` edits files named only at run time");
    }
}

/// Whether a sed script has none of the commands that write files or run programs: `w`, `W`,
/// `e`, and the `w` and `e` flags of `s`.
fn sed_script_is_safe(script: &str) -> bool {
    let chars: Vec<char> = script.chars().collect();
    let mut index = 0;
    let skip_delimited = |index: &mut usize, delimiter: char| {
        while let Some(&c) = chars.get(*index) {
            *index += 1;
            if c == '\\' {
                *index += 1;
            } else if c == delimiter {
                return;
            }
        }
    };
    let skip_to_end_of_command = |index: &mut usize| {
        while let Some(&c) = chars.get(*index) {
            if c == ';' || c == '\n' || c == '}' {
                return;
            }
            *index += 1;
        }
    };
    while let Some(&c) = chars.get(index) {
        index += 1;
        match c {
            's' | 'y' => {
                let Some(&delimiter) = chars.get(index) else {
                    return true;
                };
                if delimiter == '\\' || delimiter == '\n' {
                    return false;
                }
                index += 1;
                skip_delimited(&mut index, delimiter);
                skip_delimited(&mut index, delimiter);
                if c == 's' {
                    while let Some(&flag) = chars.get(index) {
                        if flag == 'w' || flag == 'e' {
                            return false;
                        }
                        if !(flag.is_ascii_alphanumeric()) {
                            break;
                        }
                        index += 1;
                    }
                }
            }
            '/' => skip_delimited(&mut index, '/'),
            '\\' => {
                if let Some(&delimiter) = chars.get(index) {
                    index += 1;
                    skip_delimited(&mut index, delimiter);
                }
            }
            'w' | 'W' | 'e' => return false,
            ':' | 'b' | 't' | 'T' | 'a' | 'i' | 'c' | 'r' | 'R' | 'q' | 'Q' | 'l' | 'L' => {
                skip_to_end_of_command(&mut index);
            }
            _ => {}
        }
    }
    true
}

/// `jq FILTER FILES…`, with its two-valued `--arg NAME VALUE` options.
pub(crate) fn jq(an: &mut Analyzer, args: &[Word], site: Site<'_>) {
    let mut index = 0;
    let mut filter_given = false;
    let mut operands = Vec::new();
    let mut only_arguments = false;
    while let Some(word) = args.get(index) {
        index += 1;
        let text = word.literal().unwrap_or_default();
        match text.as_str() {
            "--arg" | "--argjson" => index += 2,
            "--slurpfile" | "--rawfile" => {
                if let Some(file) = args.get(index + 1) {
                    an.read_path(file, site);
                }
                index += 2;
            }
            "-f" | "--from-file" => {
                if let Some(file) = args.get(index) {
                    an.read_path(file, site);
                }
                filter_given = true;
                index += 1;
            }
            "-L" | "--indent" => index += 1,
            "--args" | "--jsonargs" => only_arguments = true,
            _ if text.starts_with('-') && text.len() > 1 => {}
            _ => operands.push(word),
        }
    }
    let files = operands.into_iter().skip(usize::from(!filter_given));
    if !only_arguments {
        for file in files {
            an.read_path(file, site);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::sed_script_is_safe;

    #[test]
    fn sed_scripts_that_write_or_run_are_caught() {
        assert!(sed_script_is_safe("s/a/b/g"));
        assert!(sed_script_is_safe("-n"));
        assert!(sed_script_is_safe("/foo/d; s|x|y|2"));
        assert!(sed_script_is_safe(":label\nb label"));
        assert!(sed_script_is_safe("1i hello world"));
        assert!(!sed_script_is_safe("s/a/b/w out.txt"));
        assert!(!sed_script_is_safe("s/a/b/e"));
        assert!(!sed_script_is_safe("1e rm -rf /"));
        assert!(!sed_script_is_safe("/x/w /etc/passwd"));
        assert!(!sed_script_is_safe("$W log"));
    }
}
