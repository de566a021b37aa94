//! The Landlock ruleset for a [`SandboxPolicy`], applied to the calling thread.

use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, Ruleset, RulesetAttr, RulesetCreatedAttr,
    RulesetError, RulesetStatus, path_beneath_rules,
};

use super::read_plan::plan_reads;
use super::support::{AbiGap, kernel_abi};
use super::wrapper::Enforcement;
use super::{NetworkAccess, SandboxPolicy};

/// The newest Landlock ABI whose rights the ruleset asks for. Older kernels get what they
/// support (best-effort mode); [`AbiGap`] says what that leaves out.
const TARGET_ABI: ABI = ABI::V10;

/// What applying a policy achieved.
#[derive(Debug)]
pub(crate) struct Confinement {
    pub(crate) enforcement: Enforcement,
    /// Sentences for the user about what is not confined.
    pub(crate) notes: Vec<String>,
}

/// The filesystem rights the ruleset handles, i.e. denies unless a rule grants them.
///
/// Left out: `IoctlDev`, which would break terminal programs that reopen `/dev/tty` and guards
/// no file, and `ResolveUnix`, which is inter-process communication, not a file write.
fn handled_fs() -> BitFlags<AccessFs> {
    AccessFs::from_all(TARGET_ABI) & !(AccessFs::IoctlDev | AccessFs::ResolveUnix)
}

/// Restricts the calling thread (and so what it executes next) to `policy`.
///
/// `Err` is a ruleset that could not be built or applied; the thread is then unrestricted and
/// must not run the command.
pub(crate) fn confine_current_thread(policy: &SandboxPolicy) -> Result<Confinement, String> {
    let abi = match kernel_abi() {
        Ok(abi) => abi,
        Err(reason) => {
            return Ok(Confinement {
                enforcement: Enforcement::NotEnforced { reason },
                notes: Vec::new(),
            });
        }
    };
    let mut notes = Vec::new();
    let writable = canonical_existing(&policy.writable, "not making writable", &mut notes);
    let deny_read = canonical_existing(&policy.deny_read, "not hiding", &mut notes);
    let read_plan = plan_reads(Path::new("/"), &deny_read, &writable);
    notes.extend(read_plan.notes);

    let status = build_and_restrict(policy.network, &read_plan.read_beneath, &writable)
        .map_err(|error| error.to_string())?;
    let enforcement = match status {
        RulesetStatus::FullyEnforced => Enforcement::Full,
        RulesetStatus::PartiallyEnforced => Enforcement::Partial,
        RulesetStatus::NotEnforced => Enforcement::NotEnforced {
            reason: format!("the kernel (Landlock ABI {abi}) enforced none of the rules"),
        },
    };
    notes.extend(
        AbiGap::of_abi(abi)
            .into_iter()
            .filter(|gap| gap.matters_for(policy.network))
            .map(|gap| gap.describe().to_owned()),
    );
    Ok(Confinement { enforcement, notes })
}

fn build_and_restrict(
    network: NetworkAccess,
    read_beneath: &[PathBuf],
    writable: &[PathBuf],
) -> Result<RulesetStatus, RulesetError> {
    let handled = handled_fs();
    let mut ruleset = Ruleset::default().handle_access(handled)?;
    match network {
        NetworkAccess::Allowed => {}
        // Handled with no port granted: every TCP (and, from ABI 10, UDP) connect and bind fails.
        NetworkAccess::Denied => {
            ruleset = ruleset.handle_access(AccessNet::from_all(TARGET_ABI))?;
        }
    }
    let status = ruleset
        .create()?
        // Listing directories is harmless to allow everywhere, and keeps the hidden paths'
        // parents listable.
        .add_rules(path_beneath_rules(["/"], AccessFs::ReadDir))?
        .add_rules(path_beneath_rules(
            read_beneath,
            AccessFs::from_read(TARGET_ABI),
        ))?
        .add_rules(path_beneath_rules(writable, handled))?
        .restrict_self()?;
    Ok(status.ruleset)
}

/// `paths` made canonical; missing ones are dropped (there is nothing there to grant or hide),
/// others that cannot be resolved are reported as `"{what} {path}: {error}"`.
fn canonical_existing(paths: &[PathBuf], what: &str, notes: &mut Vec<String>) -> Vec<PathBuf> {
    let mut canonical = Vec::new();
    for path in paths {
        match std::fs::canonicalize(path) {
            Ok(resolved) => canonical.push(resolved),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => notes.push(format!("{what} {}: {error}", path.display())),
        }
    }
    canonical
}
