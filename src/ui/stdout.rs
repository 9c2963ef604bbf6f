//! Writing results to standard output without dying when it goes away: `aiperf … | head`
//! closes the pipe early, and a benchmark must still finish and write its artifacts.

use std::io::Write;

/// Write `text` to stdout; a closed or failing stdout is ignored.
pub fn print(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
}

/// `print` with a newline.
pub fn print_line(text: &str) {
    print(&format!("{text}\n"));
}
