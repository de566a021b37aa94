//! What the running kernel can enforce: [`detect_support`], and what older Landlock ABIs lack.

use super::NetworkAccess;

/// How much of a [`SandboxPolicy`](super::SandboxPolicy) the running kernel can enforce.
///
/// Ask once per session, before the first sandboxed command: with `Unsupported`, the wrapper
/// refuses to run anything (it fails closed), so the caller has to decide, after telling the
/// user, whether to run commands unsandboxed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SandboxSupport {
    /// Writes are confined to the writable set and, under [`NetworkAccess::Denied`], TCP is
    /// refused. `abi` is the kernel's Landlock ABI version, 4 or later.
    Full {
        /// The kernel's Landlock ABI version.
        abi: u8,
    },
    /// Landlock works, but this kernel lacks part of it: `missing` says what, for the user.
    Partial {
        /// The kernel's Landlock ABI version.
        abi: u8,
        /// The protections this ABI cannot give, in words for the user.
        missing: String,
    },
    /// Commands cannot be sandboxed: `reason` says why and, where there is one, the fix.
    Unsupported {
        /// Why, in words for the user.
        reason: String,
    },
}

/// A protection that a Landlock ABI older than the one adding it cannot give.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AbiGap {
    /// ABI 1 cannot express "rename or link into another directory", so it always refuses it.
    CrossDirectoryRename,
    /// Before ABI 3, truncating a file is not a separate right, so it is not confined.
    Truncate,
    /// Before ABI 4 there are no network rules.
    Network,
}

impl AbiGap {
    /// The gaps of `abi`, oldest protection first.
    pub(crate) fn of_abi(abi: u8) -> Vec<AbiGap> {
        let mut gaps = Vec::new();
        if abi < 2 {
            gaps.push(AbiGap::CrossDirectoryRename);
        }
        if abi < 3 {
            gaps.push(AbiGap::Truncate);
        }
        if abi < 4 {
            gaps.push(AbiGap::Network);
        }
        gaps
    }

    /// Whether the gap matters to a command run with `network`.
    #[cfg_attr(
        not(target_os = "linux"),
        allow(dead_code, reason = "only the Linux wrapper warns")
    )]
    pub(crate) fn matters_for(self, network: NetworkAccess) -> bool {
        match self {
            AbiGap::CrossDirectoryRename | AbiGap::Truncate => true,
            AbiGap::Network => match network {
                NetworkAccess::Denied => true,
                NetworkAccess::Allowed => false,
            },
        }
    }

    /// A sentence for the user: what does not work or is not confined, and the kernel needed.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            AbiGap::CrossDirectoryRename => {
                "renaming or hard-linking a file into another directory always fails \
                 (needs Landlock ABI 2, Linux 5.19)"
            }
            AbiGap::Truncate => {
                "truncating files outside the writable directories is not blocked \
                 (needs Landlock ABI 3, Linux 6.2)"
            }
            AbiGap::Network => {
                "network access cannot be denied and stays open (needs Landlock ABI 4, Linux 6.7)"
            }
        }
    }
}

/// The support that a kernel with Landlock ABI `abi` gives.
pub(crate) fn support_for_abi(abi: u8) -> SandboxSupport {
    let gaps = AbiGap::of_abi(abi);
    if gaps.is_empty() {
        SandboxSupport::Full { abi }
    } else {
        let missing: Vec<&str> = gaps.into_iter().map(AbiGap::describe).collect();
        SandboxSupport::Partial {
            abi,
            missing: missing.join("; "),
        }
    }
}

/// Probes the running kernel's Landlock ABI, without restricting the calling process.
///
/// ```
/// use cairn_policy::sandbox::{SandboxSupport, detect_support};
///
/// match detect_support() {
///     SandboxSupport::Full { .. } => {}
///     SandboxSupport::Partial { missing, .. } => eprintln!("sandbox: {missing}"),
///     SandboxSupport::Unsupported { reason } => eprintln!("no sandbox: {reason}"),
/// }
/// ```
pub fn detect_support() -> SandboxSupport {
    match kernel_abi() {
        Ok(abi) => support_for_abi(abi),
        Err(reason) => SandboxSupport::Unsupported { reason },
    }
}

/// The kernel's Landlock ABI version, or why there is none.
#[cfg(target_os = "linux")]
pub(crate) fn kernel_abi() -> Result<u8, String> {
    use landlock::{LandlockStatus, RestrictSelf};

    // `RestrictSelf::default()` asks the kernel for its Landlock version (one
    // `landlock_create_ruleset` call with the VERSION flag). With `no_new_privs` off and no flag
    // requested, `apply()` makes no other system call and restricts nothing: it only reports.
    let status = RestrictSelf::default()
        .no_new_privs(false)
        .apply()
        .map_err(|error| format!("could not ask the kernel about Landlock: {error}"))?;
    match status.landlock {
        LandlockStatus::Available {
            effective_abi,
            kernel_abi,
        } => {
            let version = kernel_abi.unwrap_or(effective_abi as i32);
            Ok(u8::try_from(version).unwrap_or(u8::MAX))
        }
        LandlockStatus::NotEnabled => Err("this kernel has Landlock but it is not enabled: add \
             `landlock` to the `lsm=` kernel boot parameter"
            .to_owned()),
        LandlockStatus::NotImplemented => Err("this kernel was built without Landlock \
             (CONFIG_SECURITY_LANDLOCK, Linux 5.13 or later)"
            .to_owned()),
    }
}

/// The kernel's Landlock ABI version, or why there is none.
#[cfg(not(target_os = "linux"))]
pub(crate) fn kernel_abi() -> Result<u8, String> {
    Err("Landlock is Linux-only".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn abi_4_and_later_is_full_support() {
        assert_eq!(support_for_abi(4), SandboxSupport::Full { abi: 4 });
        assert_eq!(support_for_abi(7), SandboxSupport::Full { abi: 7 });
    }

    #[test]
    fn older_abis_name_what_they_lack() {
        assert_eq!(
            support_for_abi(3),
            SandboxSupport::Partial {
                abi: 3,
                missing: "network access cannot be denied and stays open \
                          (needs Landlock ABI 4, Linux 6.7)"
                    .to_owned(),
            }
        );
        assert_eq!(
            AbiGap::of_abi(1),
            vec![
                AbiGap::CrossDirectoryRename,
                AbiGap::Truncate,
                AbiGap::Network
            ]
        );
    }

    #[test]
    fn the_network_gap_matters_only_when_the_network_is_denied() {
        assert!(AbiGap::Network.matters_for(NetworkAccess::Denied));
        assert!(!AbiGap::Network.matters_for(NetworkAccess::Allowed));
        assert!(AbiGap::Truncate.matters_for(NetworkAccess::Allowed));
    }
}
