//! Splitting a command's arguments into options and operands, getopt style.

use super::word::Word;

/// How a command takes its options.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct OptionSpec<'a> {
    /// Options that take a value, short ones as `-o` and long ones as `--output`.
    pub(crate) with_value: &'a [&'a str],
    /// Everything from the first operand on is an operand (wrappers such as `sudo CMD -x`).
    pub(crate) stop_at_operand: bool,
}

/// One option as written: `name` is `-r` or `--recursive`; a value given as `--name=value`,
/// `-ovalue` or as the next argument is in `value`.
#[derive(Debug, Clone)]
pub(crate) struct Opt {
    pub(crate) name: String,
    pub(crate) value: Option<Word>,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Args {
    pub(crate) options: Vec<Opt>,
    pub(crate) operands: Vec<Word>,
    /// Index in the original arguments of the first operand, if any.
    pub(crate) first_operand_index: Option<usize>,
}

impl Args {
    pub(crate) fn has(&self, names: &[&str]) -> bool {
        self.options
            .iter()
            .any(|option| names.contains(&option.name.as_str()))
    }

    /// The values given to any of `names`, in order.
    pub(crate) fn values<'s>(
        &'s self,
        names: &'s [&'s str],
    ) -> impl Iterator<Item = &'s Word> + 's {
        self.options
            .iter()
            .filter(move |option| names.contains(&option.name.as_str()))
            .filter_map(|option| option.value.as_ref())
    }
}

pub(crate) fn parse_args(args: &[Word], spec: OptionSpec<'_>) -> Args {
    let mut parsed = Args::default();
    let mut index = 0;
    let mut only_operands = false;
    while let Some(word) = args.get(index) {
        index += 1;
        let text = word.literal();
        let is_option = !only_operands
            && text
                .as_deref()
                .is_some_and(|text| text.len() > 1 && text.starts_with('-'));
        if !is_option {
            if parsed.first_operand_index.is_none() {
                parsed.first_operand_index = Some(index - 1);
            }
            parsed.operands.push(word.clone());
            if spec.stop_at_operand {
                only_operands = true;
            }
            continue;
        }
        let text = text.unwrap_or_default();
        if text == "--" {
            only_operands = true;
            continue;
        }
        if let Some(long) = text.strip_prefix("--") {
            if let Some((name, _)) = long.split_once('=') {
                parsed.options.push(Opt {
                    name: format!("--{name}"),
                    value: word.without_prefix(name.len() + 3),
                });
            } else if spec.with_value.contains(&text.as_str()) {
                parsed.options.push(Opt {
                    name: text.clone(),
                    value: args.get(index).cloned(),
                });
                index += 1;
            } else {
                parsed.options.push(Opt {
                    name: text.clone(),
                    value: None,
                });
            }
            continue;
        }
        for (offset, letter) in text.char_indices().skip(1) {
            let name = format!("-{letter}");
            if !spec.with_value.contains(&name.as_str()) {
                parsed.options.push(Opt { name, value: None });
                continue;
            }
            let attached = offset + letter.len_utf8();
            let value = if attached < text.len() {
                word.without_prefix(attached)
            } else {
                index += 1;
                args.get(index - 1).cloned()
            };
            parsed.options.push(Opt { name, value });
            break;
        }
    }
    parsed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<Word> {
        text.split_whitespace().map(Word::unquoted).collect()
    }

    fn names(args: &Args) -> Vec<String> {
        args.options
            .iter()
            .map(|option| option.name.clone())
            .collect()
    }

    #[test]
    fn short_groups_long_options_and_values_split() {
        let spec = OptionSpec {
            with_value: &["-o", "--output"],
            stop_at_operand: false,
        };
        let args = parse_args(&words("-rf --force x -ofile --output=y -- -z"), spec);
        assert_eq!(names(&args), ["-r", "-f", "--force", "-o", "--output"]);
        let operands: Vec<String> = args.operands.iter().map(Word::display).collect();
        assert_eq!(operands, ["x", "-z"]);
        let values: Vec<String> = args
            .values(&["-o", "--output"])
            .map(Word::display)
            .collect();
        assert_eq!(values, ["file", "y"]);
    }

    #[test]
    fn wrappers_stop_at_the_command() {
        let spec = OptionSpec {
            with_value: &["-u"],
            stop_at_operand: true,
        };
        let args = parse_args(&words("-u root rm -rf /"), spec);
        assert_eq!(names(&args), ["-u"]);
        assert_eq!(args.first_operand_index, Some(2));
    }
}
