//! Tests of the configuration loader: scopes, approval, errors naming file and field.

use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;

struct Dirs {
    home: tempfile::TempDir,
    project: tempfile::TempDir,
}

impl Dirs {
    fn new() -> Self {
        Dirs {
            home: tempfile::tempdir().unwrap(),
            project: tempfile::tempdir().unwrap(),
        }
    }

    fn load(&self, approval: ProjectApproval, flags: &[String]) -> Configured {
        self.try_load(approval, flags).unwrap()
    }

    fn try_load(
        &self,
        approval: ProjectApproval,
        flags: &[String],
    ) -> Result<Configured, ConfigError> {
        load(&ConfigSources {
            home: self.home.path(),
            cairn_home: &self.home.path().join(".cairn"),
            project: self.project.path(),
            flags,
            strict: false,
            approval,
        })
    }
}

fn stdio(command: &str) -> ServerConfig {
    ServerConfig::Stdio(StdioConfig {
        command: command.into(),
        args: Vec::new(),
        env: BTreeMap::new(),
        timeout: None,
        startup_timeout: None,
        always_load: false,
    })
}

#[test]
fn scopes_replace_each_other_local_over_project_over_user_and_flags_over_all() {
    let dirs = Dirs::new();
    let project_key = dirs.project.path().display().to_string();
    std::fs::write(
        dirs.home.path().join(".claude.json"),
        json!({
            "mcpServers": {"a": {"command": "user-a"}, "b": {"command": "user-b"}},
            "projects": {project_key: {"mcpServers": {"b": {"command": "local-b"}}}}
        })
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        dirs.project.path().join(".mcp.json"),
        json!({"mcpServers": {"a": {"command": "project-a"}, "c": {"command": "project-c"}}})
            .to_string(),
    )
    .unwrap();
    let approval = ProjectApproval {
        enable_all: true,
        ..ProjectApproval::default()
    };
    let flags = [json!({"mcpServers": {"c": {"command": "flag-c"}}}).to_string()];
    let configured = dirs.load(approval, &flags);
    let got: Vec<(&str, Scope, &ServerConfig)> = configured
        .servers
        .iter()
        .map(|server| (server.name.as_str(), server.scope, &server.config))
        .collect();
    assert_eq!(
        got,
        vec![
            ("a", Scope::Project, &stdio("project-a")),
            ("b", Scope::Local, &stdio("local-b")),
            ("c", Scope::Flag, &stdio("flag-c")),
        ]
    );
}

#[test]
fn project_servers_start_only_once_approved() {
    let dirs = Dirs::new();
    std::fs::write(
        dirs.project.path().join(".mcp.json"),
        json!({"mcpServers": {"one": {"command": "x"}, "two": {"command": "y"}}}).to_string(),
    )
    .unwrap();
    let cases = [
        (ProjectApproval::default(), vec![], 2),
        (
            ProjectApproval {
                enabled: vec!["two".into()],
                ..ProjectApproval::default()
            },
            vec!["two"],
            1,
        ),
        (
            ProjectApproval {
                enable_all: true,
                disabled: vec!["one".into()],
                ..ProjectApproval::default()
            },
            vec!["two"],
            0,
        ),
    ];
    for (approval, started, warned) in cases {
        let configured = dirs.load(approval.clone(), &[]);
        let names: Vec<&str> = configured.servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, started, "{approval:?}");
        assert_eq!(configured.warnings.len(), warned, "{approval:?}");
        for warning in &configured.warnings {
            assert!(warning.contains("enabledMcpjsonServers"), "{warning}");
        }
    }
}

#[test]
fn a_bad_value_names_the_file_and_the_field_a_bad_file_warns_a_bad_flag_fails() {
    let dirs = Dirs::new();
    std::fs::write(
        dirs.project.path().join(".mcp.json"),
        json!({"mcpServers": {"gh": {"command": "x", "args": ["ok", 7]}}}).to_string(),
    )
    .unwrap();
    let approval = ProjectApproval {
        enable_all: true,
        ..ProjectApproval::default()
    };
    let configured = dirs.load(approval, &[]);
    assert_eq!(
        configured.warnings,
        [
            "the MCP servers of .mcp.json do not start: .mcp.json: mcpServers.gh.args[1]: \
          invalid type: integer `7`, expected a string"
        ]
    );
    assert_eq!(configured.servers, Vec::new());
    std::fs::remove_file(dirs.project.path().join(".mcp.json")).unwrap();
    let flags = [r#"{"mcpServers": {"h": {"type": "http"}}}"#.to_string()];
    let error = dirs
        .try_load(ProjectApproval::default(), &flags)
        .unwrap_err()
        .to_string();
    assert_eq!(
        error, "--mcp-config: mcpServers.h: missing field `url`",
        "{error}"
    );
}

#[test]
fn an_unusable_cairn_home_holds_no_servers_rather_than_failing_the_run() {
    let dirs = Dirs::new();
    let file = dirs.home.path().join("a-file");
    std::fs::write(&file, "not a directory").unwrap();
    let configured = load(&ConfigSources {
        home: dirs.home.path(),
        cairn_home: &file.join("cairn"),
        project: dirs.project.path(),
        flags: &[],
        strict: false,
        approval: ProjectApproval::default(),
    })
    .unwrap();
    assert_eq!(configured.servers, Vec::new());
}

#[test]
fn strict_reads_only_the_flags() {
    let dirs = Dirs::new();
    std::fs::write(
        dirs.home.path().join(".claude.json"),
        json!({"mcpServers": {"a": {"command": "user-a"}}}).to_string(),
    )
    .unwrap();
    let flags = [json!({"mcpServers": {"f": {"command": "f"}}}).to_string()];
    let configured = load(&ConfigSources {
        home: dirs.home.path(),
        cairn_home: &dirs.home.path().join(".cairn"),
        project: dirs.project.path(),
        flags: &flags,
        strict: true,
        approval: ProjectApproval::default(),
    })
    .unwrap();
    let names: Vec<&str> = configured.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["f"]);
}

#[test]
fn a_flag_naming_a_missing_file_is_an_error_naming_it() {
    let dirs = Dirs::new();
    let missing = dirs.project.path().join("nope.json").display().to_string();
    let error = dirs
        .try_load(ProjectApproval::default(), std::slice::from_ref(&missing))
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with(&format!("cannot read {missing}: ")),
        "{error}"
    );
}

#[test]
fn always_load_is_read_for_every_kind_and_defaults_to_false() {
    let dirs = Dirs::new();
    let flags = [json!({"mcpServers": {
        "a": {"command": "a", "alwaysLoad": true},
        "h": {"type": "http", "url": "http://127.0.0.1:1/mcp", "alwaysLoad": true},
        "plain": {"command": "p"}
    }})
    .to_string()];
    let configured = dirs.load(ProjectApproval::default(), &flags);
    let pinned: Vec<(&str, bool)> = configured
        .servers
        .iter()
        .map(|s| (s.name.as_str(), s.config.always_load()))
        .collect();
    assert_eq!(pinned, [("a", true), ("h", true), ("plain", false)]);
}
