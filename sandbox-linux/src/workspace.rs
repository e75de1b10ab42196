//! The opt-ins' Linux side: the Landlock rights of a write folder
//! ([`Policy::allow_write`](sandbox_core::Policy::allow_write)).
//!
//! A write folder gets what a workspace needs and nothing that reaches past it: read, make,
//! write, truncate, remove and rename files and folders, and make symbolic links (which grant
//! nothing under Landlock, which checks the object a link leads to; virtual environments and
//! package managers make them). `Refer` lets renames and links stay within the folder; a link
//! or rename across its edge needs `Refer` on the other side too, which no read or exec path
//! has, so the kernel answers `EXDEV`. Not `Execute` (an exec path beneath the folder has it by
//! its own rule), not `MakeChar`, `MakeBlock`, `MakeFifo` or `MakeSock`, not `IoctlDev`.
//!
//! Permission and time changes stay refused by the seccomp table, beneath a write folder as
//! everywhere: seccomp cannot see the path they name, and Landlock has no right for them.

use landlock::{Access, AccessFs, BitFlags, ABI};

/// The rights beneath a write folder, on a kernel with `abi`.
pub fn write_rights(abi: ABI) -> BitFlags<AccessFs> {
    let rights = AccessFs::ReadFile
        | AccessFs::ReadDir
        | AccessFs::WriteFile
        | AccessFs::Truncate
        | AccessFs::MakeReg
        | AccessFs::MakeDir
        | AccessFs::MakeSym
        | AccessFs::RemoveFile
        | AccessFs::RemoveDir
        | AccessFs::Refer;
    rights & AccessFs::from_all(abi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_folder_gets_no_execution_no_special_node_and_no_device_ioctl() {
        let rights = write_rights(ABI::V6);
        for refused in [
            AccessFs::Execute,
            AccessFs::MakeChar,
            AccessFs::MakeBlock,
            AccessFs::MakeFifo,
            AccessFs::MakeSock,
            AccessFs::IoctlDev,
        ] {
            assert!(!rights.contains(refused), "{refused:?}");
        }
        assert!(rights.contains(AccessFs::Refer | AccessFs::Truncate | AccessFs::MakeSym));
    }
}
