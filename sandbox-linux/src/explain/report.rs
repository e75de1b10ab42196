//! The Linux side of the report: a refused call's rows of the refusal table, in the words of
//! [`sandbox_core::explain`], whose [`Explanation`] the command line and the library share.

use sandbox_core::explain::{Explanation, Rule};

use super::attribute::Refused;

/// A row of the table as one line: `` `clone` when `flags` lacks `CLONE_THREAD` ``.
pub fn rule_line(rule: &crate::rules::Rule) -> String {
    format!("{} when {}", rule.calls, rule.when)
}

/// Counts `refused` in `explanation`, its rows in words; `routine` when a runtime makes it and
/// goes on without (see [`is_nscd_probe`]).
pub fn add_call(explanation: &mut Explanation, refused: Refused, routine: bool) {
    let rules = refused
        .rules
        .iter()
        .map(|r| Rule {
            rule: rule_line(r),
            reason: r.reason.to_owned(),
            opt_in: lifted_by(&r.when),
        })
        .collect();
    if routine {
        explanation.add_routine_call(refused.name, refused.answer, rules);
    } else {
        explanation.add_call(refused.name, refused.answer, rules);
    }
}

/// The opt-in that lifts a row refused `when`, in the report's words.
fn lifted_by(when: &crate::rules::Condition) -> Option<sandbox_core::explain::OptIn> {
    use crate::rules::{Condition, OptIn};
    use sandbox_core::explain::OptIn as Named;
    let opt_in = match when {
        Condition::NotOptedIn { opt_in } | Condition::UnlessOptedIn { opt_in, .. } => opt_in,
        _ => return None,
    };
    Some(match opt_in {
        OptIn::Processes => Named::Processes,
        OptIn::ScratchMetadata => Named::Metadata,
        OptIn::LocalSocketPairs => Named::LocalSocketPairs,
        // The rows after the hosts opt-in's first still refuse every socket but TCP's, and a
        // TCP connection goes through the proxy, whose refusals --explain names by destination:
        // the row is not one to name as an opt-in's.
        OptIn::Network => return None,
    })
}

/// Whether a `socket` call with `args` is the C library's probe for the `nscd` cache: every
/// user or host lookup (`getpwuid`, `getaddrinfo`) first asks for
/// `socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)`, and goes on to the files
/// when it is refused. Routine: never the likeliest cause of a failure.
pub fn is_nscd_probe(name: &str, args: &[u64; 6]) -> bool {
    let kind = libc::SOCK_STREAM | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK;
    name == "socket" && args[0] as i32 == libc::AF_UNIX && args[1] as i32 == kind && args[2] == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use sandbox_core::explain::Seen;

    #[test]
    fn a_refused_call_carries_its_rows_in_words() {
        let row = crate::rules::RULES
            .iter()
            .find(|r| r.calls.syscall() == Some("socket"))
            .expect("a row for socket");
        let refused = Refused {
            name: "socket".to_owned(),
            rules: vec![row],
            answer: "EPERM".to_owned(),
        };
        let mut explanation = Explanation::new(Seen::Everything);
        add_call(&mut explanation, refused.clone(), false);
        add_call(&mut explanation, refused, false);
        assert_eq!(explanation.calls.len(), 1);
        assert_eq!(explanation.calls[0].count, 2);
        assert_eq!(explanation.calls[0].rules[0].rule, rule_line(row));
        assert_eq!(explanation.calls[0].rules[0].reason, row.reason);
    }
}
