//! Dropping every capability before confinement.
//!
//! Landlock and seccomp confine root too, but a confined root still holds its capabilities, and
//! those guard calls a denylist never names (setting the clock, the host name, real-time
//! scheduling, reading any file by handle). The launcher empties every set and locks the
//! securebits so that no `exec` gives them back, then reads them back.
//!
//! What the drop costs (about 40 µs of a launch on the bench machine) is the bounding set: the
//! kernel lowers it one capability per `prctl(PR_CAPBSET_DROP)`, and each such call replaces the
//! process's credentials (`prepare_creds`, every security module's copy, `commit_creds`, and the
//! old ones freed through RCU), about 0.9 µs each for 41 capabilities. No call lowers the set at
//! once, and the set is kept for defence in depth (it bounds what any later `exec` could grant
//! were `no_new_privs` or the securebits ever bypassed), so that part stays. What went: probing
//! 42 numbers for the last capability (a binary search now asks 6) and reading the ambient set
//! back capability by capability when the kernel's own invariant already proves it empty.

use std::io;

use crate::sys::{self, CapSets};

const PR_CAPBSET_READ: libc::c_int = 23;
const PR_CAPBSET_DROP: libc::c_int = 24;
const PR_GET_SECUREBITS: libc::c_int = 27;
const PR_SET_SECUREBITS: libc::c_int = 28;
const PR_CAP_AMBIENT: libc::c_int = 47;
const PR_CAP_AMBIENT_IS_SET: libc::c_ulong = 1;
const PR_CAP_AMBIENT_CLEAR_ALL: libc::c_ulong = 4;
const CAP_SETPCAP: u32 = 8;
/// Every securebit but `KEEP_CAPS`, locked: root is not special to `exec` or `setuid` any more,
/// and no ambient capability can be raised.
const SECUREBITS_LOCKED: libc::c_ulong = 0b1110_1111;

/// A capability set that is not empty after dropping, or a step that failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CapsError {
    /// A `prctl` or `capset` call failed.
    #[error("{step}")]
    Call {
        /// What was being done.
        step: &'static str,
        /// What the call reported.
        #[source]
        source: io::Error,
    },
    /// A set still holds capabilities after dropping them.
    #[error("the {set} capability set is {mask:#x} after dropping every capability")]
    Remains {
        /// Which set.
        set: &'static str,
        /// What it holds.
        mask: u64,
    },
}

/// What the launcher holds after dropping, as `/proc/self/status` would show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Held {
    /// Effective, permitted and inheritable.
    pub sets: CapSets,
    /// The bounding set.
    pub bounding: u64,
    /// The ambient set.
    pub ambient: u64,
}

/// Empties every capability set and locks the securebits, then checks that nothing remains.
///
/// Without `CAP_SETPCAP` (an ordinary user) the bounding set and the securebits cannot be
/// changed; such a process holds no capability to begin with, and `no_new_privs` (set with
/// Landlock) stops any `exec` from granting one, so only then is a full bounding set accepted.
pub fn drop_all() -> Result<Held, CapsError> {
    let call = |step| move |source| CapsError::Call { step, source };
    let before = sys::capget().map_err(call("reading the capability sets"))?;
    let could_set_pcap = before.effective & (1 << CAP_SETPCAP) != 0;
    let last = last_capability();
    if could_set_pcap {
        for cap in 0..=last {
            sys::prctl(PR_CAPBSET_DROP, cap.into(), 0)
                .map_err(call("dropping the bounding set"))?;
        }
        let bits = sys::prctl(PR_GET_SECUREBITS, 0, 0).map_err(call("reading the securebits"))?;
        if bits as libc::c_ulong & SECUREBITS_LOCKED != SECUREBITS_LOCKED {
            sys::prctl(PR_SET_SECUREBITS, SECUREBITS_LOCKED, 0)
                .map_err(call("locking the securebits"))?;
        }
    }
    sys::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0)
        .map_err(call("clearing the ambient set"))?;
    sys::capset_empty().map_err(call("emptying the capability sets"))?;

    let held = held(last).map_err(call("reading the capability sets back"))?;
    for (set, mask) in [
        ("effective", held.sets.effective),
        ("permitted", held.sets.permitted),
        ("inheritable", held.sets.inheritable),
        ("ambient", held.ambient),
    ] {
        if mask != 0 {
            return Err(CapsError::Remains { set, mask });
        }
    }
    if could_set_pcap && held.bounding != 0 {
        return Err(CapsError::Remains {
            set: "bounding",
            mask: held.bounding,
        });
    }
    Ok(held)
}

/// Reads every set back.
///
/// The ambient set is read only when the permitted and inheritable sets share a capability: the
/// kernel keeps ambient within both (`cap_capset` and `PR_CAP_AMBIENT_RAISE` refuse anything
/// else, and lowering either set clears the ambient capabilities it no longer holds), so with
/// no capability in both it is empty, and asking 41 times costs a launch about 6 µs.
pub fn held(last: u32) -> io::Result<Held> {
    let sets = sys::capget()?;
    let mut bounding = 0;
    let mut ambient = 0;
    let ambient_possible = sets.permitted & sets.inheritable != 0;
    for cap in 0..=last {
        if sys::prctl(PR_CAPBSET_READ, cap.into(), 0)? == 1 {
            bounding |= 1 << cap;
        }
        if ambient_possible && sys::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, cap.into())? == 1 {
            ambient |= 1 << cap;
        }
    }
    Ok(Held {
        sets,
        bounding,
        ambient,
    })
}

/// The highest capability number this kernel knows: the first one `PR_CAPBSET_READ` rejects,
/// less one. Asking the kernel keeps a capability a newer kernel adds from being missed.
pub fn last_capability() -> u32 {
    // Asked once per process: the launcher needs it to drop the sets and again to check them.
    static LAST: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *LAST.get_or_init(probe_last_capability)
}

/// The kernel answers `PR_CAPBSET_READ` for every number up to its last capability and
/// refuses every number above, so the boundary is found by halving: 6 calls instead of 42.
fn probe_last_capability() -> u32 {
    let known = |cap: u32| sys::prctl(PR_CAPBSET_READ, cap.into(), 0).is_ok();
    // Invariant: `low` is known (capability 0 always is), `high` is not or is past 63.
    let (mut low, mut high) = (0u32, 64u32);
    while high - low > 1 {
        let mid = low + (high - low) / 2;
        if known(mid) {
            low = mid;
        } else {
            high = mid;
        }
    }
    low
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_search_finds_the_first_number_the_kernel_refuses() {
        let linear = (0..64u32)
            .find(|&cap| sys::prctl(PR_CAPBSET_READ, cap.into(), 0).is_err())
            .map_or(63, |first_unknown| first_unknown.saturating_sub(1));
        assert_eq!(probe_last_capability(), linear);
    }
}
