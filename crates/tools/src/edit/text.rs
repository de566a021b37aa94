//! A text file as the edit tools see it: the text the model read, and the conventions of the
//! file (byte-order mark, line endings, final newline) that an edit must not disturb.

/// How the file ends its lines, judged by the majority.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LineEnding {
    Lf,
    Crlf,
}

impl LineEnding {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            LineEnding::Lf => "\n",
            LineEnding::Crlf => "\r\n",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ByteOrderMark {
    Absent,
    Present,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FinalNewline {
    Absent,
    Present,
}

/// Why a file cannot be edited as text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NotText {
    /// It has NUL bytes.
    Binary,
    /// It is not valid UTF-8.
    NotUtf8,
}

const UTF8_BOM: &str = "\u{feff}";

/// The text of a file without its byte-order mark, and how to write it back the same way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TextFile {
    pub(crate) text: String,
    pub(crate) bom: ByteOrderMark,
    pub(crate) line_ending: LineEnding,
    pub(crate) final_newline: FinalNewline,
}

impl TextFile {
    /// A file that does not exist yet: no conventions to keep.
    pub(crate) fn new_empty() -> TextFile {
        TextFile {
            text: String::new(),
            bom: ByteOrderMark::Absent,
            line_ending: LineEnding::Lf,
            final_newline: FinalNewline::Absent,
        }
    }

    pub(crate) fn decode(bytes: Vec<u8>) -> Result<TextFile, NotText> {
        if bytes.contains(&0) {
            return Err(NotText::Binary);
        }
        let text = String::from_utf8(bytes).map_err(|_| NotText::NotUtf8)?;
        let (text, bom) = match text.strip_prefix(UTF8_BOM) {
            Some(rest) => (rest.to_string(), ByteOrderMark::Present),
            None => (text, ByteOrderMark::Absent),
        };
        let crlf = text.matches("\r\n").count();
        let lf_only = text.matches('\n').count() - crlf;
        let line_ending = if crlf > lf_only {
            LineEnding::Crlf
        } else {
            LineEnding::Lf
        };
        let final_newline = if text.ends_with('\n') {
            FinalNewline::Present
        } else {
            FinalNewline::Absent
        };
        Ok(TextFile {
            text,
            bom,
            line_ending,
            final_newline,
        })
    }

    /// `edited` with the file's final-newline convention restored. The model never sees
    /// whether the last line ends with a newline, so an edit that touches the end of the file
    /// must not add or drop it by accident. An empty original has no convention to keep, and
    /// an edit that empties the file stays empty.
    pub(crate) fn keep_final_newline(&self, mut edited: String) -> String {
        if self.text.is_empty() || edited.is_empty() {
            return edited;
        }
        match self.final_newline {
            FinalNewline::Present => {
                if !edited.ends_with('\n') {
                    edited.push_str(self.line_ending.as_str());
                }
            }
            FinalNewline::Absent => {
                if let Some(stripped) = edited.strip_suffix('\n') {
                    let stripped = stripped.strip_suffix('\r').unwrap_or(stripped);
                    edited.truncate(stripped.len());
                }
            }
        }
        edited
    }

    /// The bytes to write for `text`: the byte-order mark back in front, if the file had one.
    pub(crate) fn encode(&self, text: &str) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(text.len() + UTF8_BOM.len());
        match self.bom {
            ByteOrderMark::Present => bytes.extend_from_slice(UTF8_BOM.as_bytes()),
            ByteOrderMark::Absent => {}
        }
        bytes.extend_from_slice(text.as_bytes());
        bytes
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn decodes_the_conventions() {
        let file = TextFile::decode(b"\xef\xbb\xbfa\r\nb\r\nc\n".to_vec()).unwrap();
        assert_eq!(
            file,
            TextFile {
                text: "a\r\nb\r\nc\n".into(),
                bom: ByteOrderMark::Present,
                line_ending: LineEnding::Crlf,
                final_newline: FinalNewline::Present,
            }
        );
        assert_eq!(TextFile::decode(b"a\0b".to_vec()), Err(NotText::Binary));
        assert_eq!(TextFile::decode(b"caf\xe9".to_vec()), Err(NotText::NotUtf8));
    }

    #[test]
    fn the_final_newline_follows_the_original() {
        let with = TextFile::decode(b"a\r\nb\r\n".to_vec()).unwrap();
        assert_eq!(with.keep_final_newline("a\r\nc".into()), "a\r\nc\r\n");
        let without = TextFile::decode(b"a\r\nb".to_vec()).unwrap();
        assert_eq!(without.keep_final_newline("a\r\nc\r\n".into()), "a\r\nc");
        assert_eq!(without.keep_final_newline(String::new()), "");
        assert_eq!(
            TextFile::new_empty().keep_final_newline("x\n".into()),
            "x\n"
        );
    }

    #[test]
    fn encoding_puts_the_byte_order_mark_back() {
        let file = TextFile::decode(b"\xef\xbb\xbfx".to_vec()).unwrap();
        assert_eq!(file.encode("y"), b"\xef\xbb\xbfy".to_vec());
    }
}
