//! Timer slack: how late Linux may wake a thread's sleeps so it can batch wake-ups (50 µs by
//! default). Threads that must wake on time (the open-loop pacer, the mock's token timer) cut it.

/// Ask Linux to wake this thread's sleeps on time rather than up to 50 µs late.
pub fn tighten_timer_slack() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_TIMERSLACK takes one integer and only changes this thread's timer slack.
    unsafe {
        libc::prctl(
            libc::PR_SET_TIMERSLACK,
            1 as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
        );
    }
}
