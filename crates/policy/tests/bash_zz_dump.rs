#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    reason = "temporary exploration of tree shapes; parses only, never runs anything"
)]
#[test]
fn dump() {
    let Ok(input) = std::fs::read_to_string("/tmp/bashdump/in.txt") else {
        return;
    };
    let mut p = tree_sitter::Parser::new();
    p.set_language(&tree_sitter_bash::LANGUAGE.into()).unwrap();
    let mut out = String::new();
    for line in input.split("\n---\n") {
        let t = p.parse(line, None).unwrap();
        out.push_str(&format!("=== {line}\n"));
        dump_node(t.root_node(), line.as_bytes(), 0, None, &mut out);
    }
    std::fs::write("/tmp/bashdump/out.txt", out).unwrap();
}
fn dump_node(
    n: tree_sitter::Node,
    src: &[u8],
    depth: usize,
    field: Option<&str>,
    out: &mut String,
) {
    let text = n.utf8_text(src).unwrap_or("");
    let short: String = text.chars().take(40).collect();
    out.push_str(&format!(
        "{}{}{}{} {:?}{}\n",
        "  ".repeat(depth),
        field.map(|f| format!("{f}: ")).unwrap_or_default(),
        if n.is_named() { "" } else { "'" },
        n.kind(),
        short,
        if n.is_missing() { " MISSING" } else { "" }
    ));
    let mut c = n.walk();
    for (i, ch) in n.children(&mut c).enumerate() {
        dump_node(ch, src, depth + 1, n.field_name_for_child(i as u32), out);
    }
}
