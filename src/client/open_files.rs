//! The open-file limit (`RLIMIT_NOFILE`) as the connection pool sees it: raised once from the
//! soft to the hard limit, it bounds how many connections may be open at once, and explains
//! itself when that bound holds requests back or a connection cannot be opened.

use std::sync::OnceLock;

/// Descriptors kept free for everything else the process opens: artifacts, the tokenizer,
/// server-metrics scrapes, the live-metrics listener, the runtime's own.
const RESERVED_FILES: u64 = 128;

/// The process's open-file limit after raising it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OpenFileLimit {
    /// The limit in force (`ulimit -n`).
    pub soft: u64,
    /// The most an unprivileged process may raise it to (`ulimit -Hn`).
    pub hard: u64,
}

impl OpenFileLimit {
    /// The limit, raised from soft to hard the first time it is asked for (None where it
    /// cannot be read: then no bound is applied).
    pub fn raised() -> Option<Self> {
        static LIMIT: OnceLock<Option<OpenFileLimit>> = OnceLock::new();
        *LIMIT.get_or_init(raise_to_hard)
    }

    /// How many connections of `files_each` descriptors fit beside the reserved ones.
    pub fn connections_allowed(&self, files_each: u64) -> usize {
        let spare = self.soft.saturating_sub(RESERVED_FILES).max(files_each);
        usize::try_from(spare / files_each.max(1)).unwrap_or(usize::MAX)
    }

    /// Why requests wait although fewer than `wanted` connections are open, and what to do.
    pub fn holds_back(&self, wanted: usize, allowed: usize) -> String {
        format!(
            "{wanted} connections wanted, but the open-file limit (ulimit -n: {}) allows {allowed}; the other \
             requests wait for a free connection (http_req_blocked). {}, or set `http2: true` on the endpoint \
             (every request over one connection)",
            self.soft,
            self.how_to_raise(wanted as u64 + RESERVED_FILES)
        )
    }

    /// A connection failed for want of descriptors (EMFILE).
    pub fn exhausted(&self) -> String {
        format!(
            "too many open files: the open-file limit (ulimit -n) is {}. {}, or set fewer `connections: #{{ max }}` \
             or `http2: true` on the endpoint",
            self.soft,
            self.how_to_raise(self.soft.saturating_mul(2))
        )
    }

    fn how_to_raise(&self, needed: u64) -> String {
        let mut advice = format!("Raise it with `ulimit -n {needed}` before starting aiperf");
        if needed > self.hard {
            advice.push_str(&format!(
                " after raising the hard limit ({}) as root (/etc/security/limits.conf, systemd LimitNOFILE=, \
                 docker --ulimit nofile=)",
                self.hard
            ));
        }
        advice
    }
}

fn raise_to_hard() -> Option<OpenFileLimit> {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes one rlimit into the struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return None;
    }
    if limit.rlim_cur < limit.rlim_max {
        let raised = libc::rlimit { rlim_cur: limit.rlim_max, rlim_max: limit.rlim_max };
        // SAFETY: setrlimit reads the rlimit it is given; on failure the old limit stays.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            limit.rlim_cur = limit.rlim_max;
        } else {
            tracing::debug!("cannot raise the open-file limit to {}", limit.rlim_max);
        }
    }
    let as_count = |value: libc::rlim_t| if value == libc::RLIM_INFINITY { u64::MAX } else { value };
    Some(OpenFileLimit { soft: as_count(limit.rlim_cur), hard: as_count(limit.rlim_max) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_soft_limit_is_raised_to_the_hard_one() {
        let limit = OpenFileLimit::raised().expect("the limit can be read");
        assert_eq!(limit.soft, limit.hard);
        let mut now = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut now) }, 0);
        assert_eq!(now.rlim_cur, limit.soft, "the process runs with the raised limit");
    }

    #[test]
    fn connections_leave_room_for_other_files() {
        let limit = OpenFileLimit { soft: 20_000, hard: 20_000 };
        assert_eq!(limit.connections_allowed(1), 19_872);
        assert_eq!(limit.connections_allowed(2), 9_936, "a server in the process holds the other end");
        assert_eq!(OpenFileLimit { soft: 64, hard: 64 }.connections_allowed(1), 1, "at least one");
    }

    #[test]
    fn the_messages_name_the_limit_and_how_to_raise_it() {
        let limit = OpenFileLimit { soft: 20_000, hard: 20_000 };
        let message = limit.holds_back(25_000, 19_872);
        assert!(message.contains("ulimit -n: 20000") && message.contains("allows 19872"), "{message}");
        assert!(message.contains("ulimit -n 25128") && message.contains("hard limit (20000) as root"), "{message}");
        let within_hard = OpenFileLimit { soft: 1_024, hard: 65_536 }.holds_back(2_000, 896);
        assert!(within_hard.contains("ulimit -n 2128") && !within_hard.contains("hard limit"), "{within_hard}");
        assert!(limit.exhausted().starts_with("too many open files: the open-file limit (ulimit -n) is 20000"));
    }
}
