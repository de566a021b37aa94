//! Permission rules at scale: a settings file with 10,000, 40,000 and 100,000 allow rules,
//! loaded (read, merged with the other levels, checked) and parsed into the `RuleSet` the
//! gate judges calls with. Both steps must be linear: 10,000 rules once took 0.5 s and
//! 40,000 took 4.6 s, comparing each rule with every one before it. 100,000 rules must load
//! and parse well under a second, and a call no rule covers must be judged against all of
//! them in a few milliseconds (`evaluate_3_calls`: a Read, a Bash and a WebFetch call).
//!
//! Run with `cargo bench -p cairn-policy --bench rules_parse`; throughput is in rules per
//! second.

use std::hint::black_box;
use std::path::Path;

use cairn_config::SettingsLoader;
use cairn_policy::rules::{CallFacts, RuleKind, RuleOrigin, RuleSet};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use serde_json::{Value, json};

/// `count` distinct rules of the kinds people write: commands, paths and domains.
fn rules(count: usize) -> Vec<String> {
    (0..count)
        .map(|i| match i % 3 {
            0 => format!("Bash(tool-{i} --flag:*)"),
            1 => format!("Read(src/dir{i}/**)"),
            _ => format!("WebFetch(domain:host{i}.example.com)"),
        })
        .collect()
}

/// Loads the settings under `home` and `project` and parses their allow rules.
fn load_and_parse(home: &Path, project: &Path) -> RuleSet {
    let loaded = match SettingsLoader::new(home, project).load() {
        Ok(loaded) => loaded,
        Err(error) => panic!("{error}"),
    };
    let allow = loaded
        .get("permissions.allow")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let origin = RuleOrigin::new(
        project.join(".claude/settings.json").display().to_string(),
        project,
    );
    let (set, errors) = RuleSet::new(
        allow
            .iter()
            .filter_map(Value::as_str)
            .map(|text| (RuleKind::Allow, text.to_owned(), origin.clone())),
    );
    assert!(errors.is_empty(), "{errors:?}");
    set
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("rules_parse");
    group.sample_size(10);
    for count in [10_000, 40_000, 100_000] {
        let home = tempfile::tempdir().unwrap_or_else(|error| panic!("{error}"));
        let project = tempfile::tempdir().unwrap_or_else(|error| panic!("{error}"));
        let dir = project.path().join(".claude");
        let settings = json!({"permissions": {"allow": rules(count)}});
        std::fs::create_dir(&dir)
            .and_then(|()| std::fs::write(dir.join("settings.json"), settings.to_string()))
            .unwrap_or_else(|error| panic!("{error}"));
        // The same rules at the user level too: every one is a duplicate to merge away.
        let user = home.path().join(".claude");
        std::fs::create_dir(&user)
            .and_then(|()| std::fs::write(user.join("settings.json"), settings.to_string()))
            .unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(
            load_and_parse(home.path(), project.path()).rules().len(),
            count
        );

        group.throughput(Throughput::Elements(count as u64));
        group.bench_with_input(BenchmarkId::new("load_and_parse", count), &count, |b, _| {
            b.iter(|| black_box(load_and_parse(home.path(), project.path())));
        });
        group.bench_with_input(BenchmarkId::new("load_only", count), &count, |b, _| {
            b.iter(|| black_box(SettingsLoader::new(home.path(), project.path()).load().ok()));
        });

        // Calls no rule covers, so each is tried against every rule: the slowest verdicts.
        let set = load_and_parse(home.path(), project.path());
        let read_paths = [project.path().join("src/elsewhere/main.rs")];
        let bash_commands = ["tool-unknown --flag".to_owned()];
        let read_input = json!({"file_path": read_paths[0]});
        let bash_input = json!({"command": bash_commands[0]});
        let fetch_input = json!({"url": "https://unknown.example.org/x"});
        let calls = [
            ("Read", &read_input, &read_paths[..], None),
            ("Bash", &bash_input, &[][..], Some(&bash_commands[..])),
            ("WebFetch", &fetch_input, &[][..], None),
        ];
        group.throughput(Throughput::Elements(count as u64 * calls.len() as u64));
        group.bench_with_input(
            BenchmarkId::new("evaluate_3_calls", count),
            &count,
            |b, _| {
                b.iter(|| {
                    for (tool, input, paths, bash_commands) in calls {
                        let call = CallFacts {
                            tool,
                            input,
                            paths,
                            bash_commands,
                            home: home.path(),
                            cwd: project.path(),
                        };
                        assert!(black_box(set.evaluate(&call)).is_none());
                    }
                });
            },
        );
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
