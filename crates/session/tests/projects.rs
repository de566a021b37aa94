//! Which sessions belong to which folder, one writer per session, and who may read the files:
//! project keys unique per real path (with sessions an older cairn filed by slug still found,
//! never mixed up), the writer's lock, and 0600/0700 modes.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::fs;
use std::path::{Path, PathBuf};

use cairn_protocol::Message;
use cairn_session::{Entry, NewSession, SessionError, SessionId, SessionStore};
use pretty_assertions::assert_eq;

fn new_session() -> NewSession {
    NewSession {
        model: "claude-sonnet-4-5".to_owned(),
        git_branch: None,
    }
}

/// Two real folders whose slugs agree (`ws-a` and `ws_a`), and a store in its own home.
struct Folders {
    _root: tempfile::TempDir,
    dashed: PathBuf,
    underscored: PathBuf,
    store: SessionStore,
    home: PathBuf,
}

fn folders() -> Folders {
    let root = tempfile::tempdir().unwrap();
    let dashed = root.path().join("ws-a");
    let underscored = root.path().join("ws_a");
    fs::create_dir(&dashed).unwrap();
    fs::create_dir(&underscored).unwrap();
    let home = root.path().join("cairn-home");
    Folders {
        store: SessionStore::new(&home),
        dashed: fs::canonicalize(dashed).unwrap(),
        underscored: fs::canonicalize(underscored).unwrap(),
        home,
        _root: root,
    }
}

fn start(store: &SessionStore, cwd: &Path, prompt: &str) -> SessionId {
    let id = SessionId::new();
    let mut writer = store.create(cwd, &id, new_session()).unwrap();
    writer
        .append(&Entry::user(Message::user_text(prompt)))
        .unwrap();
    writer.sync().unwrap();
    id
}

/// The bare slug an older cairn named a folder's directory by.
fn old_slug(cwd: &Path) -> String {
    cwd.to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

#[test]
fn folders_that_share_a_slug_keep_their_own_sessions() {
    let f = folders();
    let dashed = start(&f.store, &f.dashed, "in ws-a");
    let underscored = start(&f.store, &f.underscored, "in ws_a");

    assert_ne!(
        f.store.project_dir(&f.dashed),
        f.store.project_dir(&f.underscored)
    );
    assert_eq!(f.store.latest(&f.dashed).unwrap(), Some(dashed));
    assert_eq!(f.store.latest(&f.underscored).unwrap(), Some(underscored));
    let listed: Vec<SessionId> = f
        .store
        .list(&f.dashed)
        .unwrap()
        .iter()
        .map(|s| s.id)
        .collect();
    assert_eq!(listed, vec![dashed]);
}

#[test]
fn sessions_an_older_cairn_filed_by_slug_are_found_and_never_mixed_up() {
    let f = folders();
    let dashed = start(&f.store, &f.dashed, "in ws-a, long ago");
    let underscored = start(&f.store, &f.underscored, "in ws_a, long ago");
    // Both as an older cairn left them: in one directory named by the slug they share.
    let legacy = f.home.join("projects").join(old_slug(&f.dashed));
    assert_eq!(old_slug(&f.dashed), old_slug(&f.underscored));
    fs::create_dir_all(&legacy).unwrap();
    for (cwd, id) in [(&f.dashed, dashed), (&f.underscored, underscored)] {
        let file = f.store.path(cwd, &id);
        fs::rename(&file, legacy.join(file.file_name().unwrap())).unwrap();
    }

    for (cwd, id, prompt) in [
        (&f.dashed, dashed, "in ws-a, long ago"),
        (&f.underscored, underscored, "in ws_a, long ago"),
    ] {
        assert_eq!(f.store.latest(cwd).unwrap(), Some(id));
        assert_eq!(f.store.path(cwd, &id), legacy.join(format!("{id}.jsonl")));
        assert_eq!(
            f.store.load(cwd, &id).unwrap().messages,
            vec![Message::user_text(prompt)]
        );
        let listed: Vec<SessionId> = f.store.list(cwd).unwrap().iter().map(|s| s.id).collect();
        assert_eq!(listed, vec![id]);
    }
    // The other folder's session is not this folder's, even by id.
    assert!(matches!(
        f.store.load(&f.dashed, &underscored),
        Err(SessionError::NotFound { .. })
    ));

    // Continuing appends where the session is; a new session goes to the new directory.
    let mut writer = f.store.open_append(&f.dashed, &dashed).unwrap();
    writer
        .append(&Entry::user(Message::user_text("and again")))
        .unwrap();
    drop(writer);
    assert_eq!(
        f.store.load(&f.dashed, &dashed).unwrap().messages,
        vec![
            Message::user_text("in ws-a, long ago"),
            Message::user_text("and again")
        ]
    );
    let fresh = start(&f.store, &f.dashed, "new");
    assert!(
        f.store
            .path(&f.dashed, &fresh)
            .starts_with(f.store.project_dir(&f.dashed))
    );
    assert_eq!(
        f.store.load(&f.underscored, &underscored).unwrap().messages,
        vec![Message::user_text("in ws_a, long ago")]
    );
}

#[test]
fn a_session_has_one_writer_at_a_time() {
    let f = folders();
    let id = SessionId::new();
    let first = f.store.create(&f.dashed, &id, new_session()).unwrap();
    let second = f.store.open_append(&f.dashed, &id);
    let path = f.store.path(&f.dashed, &id);
    assert_eq!(
        second.map(|_| ()).map_err(|error| error.to_string()),
        Err(format!(
            "the session {} is in use by another cairn; fork it (--fork-session) to continue \
             it here",
            path.display()
        ))
    );
    // Forking only reads it, so a second cairn can carry on in a copy.
    let forked = f.store.fork(&f.dashed, &id, &SessionId::new());
    assert!(forked.is_ok(), "{forked:?}");
    drop(first);
    assert!(f.store.open_append(&f.dashed, &id).is_ok());
}

#[cfg(unix)]
#[test]
fn session_files_are_the_users_alone() {
    use std::os::unix::fs::PermissionsExt;

    let f = folders();
    let id = start(&f.store, &f.dashed, "private");
    let forked = SessionId::new();
    drop(f.store.fork(&f.dashed, &id, &forked).unwrap());
    let mode = |path: &Path| fs::metadata(path).unwrap().permissions().mode() & 0o777;
    let project = f.store.project_dir(&f.dashed);
    assert_eq!(
        [
            mode(&f.home),
            mode(&f.home.join("projects")),
            mode(&project),
            mode(&f.store.path(&f.dashed, &id)),
            mode(&f.store.path(&f.dashed, &forked)),
        ],
        [0o700, 0o700, 0o700, 0o600, 0o600]
    );
}
