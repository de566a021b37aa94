//! Reading files written in an older format version.
//!
//! Version 1 is the first, so there is nothing to migrate yet. The plan for version 2:
//!
//! 1. bump [`FORMAT_VERSION`] to 2 and change the types in `entry.rs`;
//! 2. append to [`MIGRATIONS`] a function that turns one version-1 line (the header or an
//!    entry, as JSON) into its version-2 form (the assertion below fails to compile until
//!    there is one migration per step);
//! 3. keep `tests/fixtures/v1-session.jsonl` and its test unchanged: they prove old files load.
//!
//! Whatever changes, every version's first line stays `{"type":"header","format_version":N,…}`
//! so that the version can be read before anything else.

use std::borrow::Cow;

use serde_json::Value;

use crate::FORMAT_VERSION;

/// Turns one line of version `n` into version `n + 1`.
type Migration = fn(Value) -> Value;

/// `MIGRATIONS[i]` upgrades version `i + 1` to version `i + 2`.
const MIGRATIONS: &[Migration] = &[];

const _: () = assert!(
    MIGRATIONS.len() + 1 == FORMAT_VERSION as usize,
    "each format version after the first needs a migration"
);

/// The line in the current format: itself when it is already current, otherwise the result of
/// the migrations from `version` on.
pub(crate) fn upgrade_line(version: u32, line: &[u8]) -> Result<Cow<'_, [u8]>, serde_json::Error> {
    if version >= FORMAT_VERSION {
        return Ok(Cow::Borrowed(line));
    }
    let mut value: Value = serde_json::from_slice(line)?;
    let first = usize::try_from(version.saturating_sub(1)).unwrap_or(usize::MAX);
    for migrate in MIGRATIONS.iter().skip(first) {
        value = migrate(value);
    }
    serde_json::to_vec(&value).map(Cow::Owned)
}
