//! `code_execution` (LiveCodeBench, pass@1): the reply's last fenced Python block is run by
//! `python3` against each of the problem's tests, one child process per test, under limits:
//! CPU seconds, address space, file size and open files (rlimits), a wall-clock timeout, its
//! own process group (killed whole), an empty environment and a scratch folder, and, where the
//! OS allows it, a network namespace of its own (no network). It is not a sandbox: the code
//! can read what the user running aiperf can read. See docs/accuracy.md.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::Graded;

/// What one run of the generated program may take.
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    pub cpu_s: u64,
    pub memory_bytes: u64,
    pub wall: Duration,
    /// The largest output read back.
    pub output_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { cpu_s: 6, memory_bytes: 1 << 30, wall: Duration::from_secs(10), output_bytes: 1 << 20 }
    }
}

/// The last ```python (or plain ```) block of the reply.
fn code_of(reply: &str) -> Option<String> {
    let mut found = None;
    let mut rest = reply;
    while let Some(open) = rest.find("```") {
        let after_fence = &rest[open + 3..];
        let Some(line_end) = after_fence.find('\n') else { break };
        let body = &after_fence[line_end + 1..];
        let Some(close) = body.find("```") else { break };
        found = Some(body[..close].to_string());
        rest = &body[close + 3..];
    }
    found
}

/// One test as LiveCodeBench stores it.
struct Test {
    input: String,
    output: String,
    functional: bool,
}

fn tests_of(gold: &str) -> Result<(Vec<Test>, Option<String>), String> {
    let gold: Value = serde_json::from_str(gold).map_err(|e| format!("the gold tests are not JSON: {e}"))?;
    let text = |test: &Value, key: &str| test.get(key).and_then(Value::as_str).unwrap_or_default().to_string();
    let tests = gold.get("tests").and_then(Value::as_array).cloned().unwrap_or_default();
    let tests: Vec<Test> = tests
        .iter()
        .map(|test| Test {
            input: text(test, "input"),
            output: text(test, "output"),
            functional: text(test, "testtype") == "functional",
        })
        .collect();
    if tests.is_empty() {
        return Err("the problem has no tests".into());
    }
    Ok((tests, gold.get("func_name").and_then(Value::as_str).map(str::to_string)))
}

/// A functional test's program: the reply's code, then a call of `Solution().<func>` with the
/// JSON arguments on stdin (one a line), its result printed as JSON.
fn functional_program(code: &str, func_name: &str) -> String {
    format!(
        "{code}\n\nimport json as _json, sys as _sys\n_args = [_json.loads(_line) for _line in _sys.stdin.read().splitlines() if _line.strip()]\n\
         _target = Solution().{func_name} if 'Solution' in globals() else globals()['{func_name}']\n\
         print(_json.dumps(_target(*_args)))\n"
    )
}

/// The lines of `text` with trailing spaces and trailing empty lines dropped.
fn lines_of(text: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    while lines.last().is_some_and(|line| line.is_empty()) {
        lines.pop();
    }
    lines
}

fn same_output(test: &Test, printed: &str) -> bool {
    if test.functional {
        let parsed = |text: &str| serde_json::from_str::<Value>(text.trim()).ok();
        return match (parsed(printed), parsed(&test.output)) {
            (Some(printed), Some(expected)) => printed == expected,
            _ => printed.trim() == test.output.trim(),
        };
    }
    lines_of(printed) == lines_of(&test.output)
}

pub fn grade(reply: &str, gold: &str, limits: &Limits) -> Graded {
    let verdict = |correct: bool, unparsed: bool, extracted: String, explanation: String| Graded {
        correct,
        unparsed,
        extracted,
        expected: format!("{} tests", tests_of(gold).map_or(0, |(tests, _)| tests.len())),
        explanation,
    };
    let Some(code) = code_of(reply) else {
        return verdict(false, true, String::new(), "no fenced code block in the reply".into());
    };
    let (tests, func_name) = match tests_of(gold) {
        Ok(found) => found,
        Err(problem) => return verdict(false, false, code, problem),
    };
    for (index, test) in tests.iter().enumerate() {
        let program = match (test.functional, &func_name) {
            (true, Some(name)) => functional_program(&code, name),
            (true, None) => return verdict(false, false, code, "a functional test without func_name".into()),
            (false, _) => code.clone(),
        };
        match run_python(&program, &test.input, limits) {
            Ok(printed) if same_output(test, &printed) => {}
            Ok(_) => {
                return verdict(false, false, code, format!("test {} of {}: wrong output", index + 1, tests.len()));
            }
            Err(why) => return verdict(false, false, code, format!("test {} of {}: {why}", index + 1, tests.len())),
        }
    }
    verdict(true, false, code, format!("passed all {} tests", tests.len()))
}

/// Runs `program` with `python3 -I` on `input` under `limits`; its stdout, or why it failed.
fn run_python(program: &str, input: &str, limits: &Limits) -> Result<String, String> {
    let scratch = Scratch::new()?;
    let script = scratch.0.join("solution.py");
    std::fs::write(&script, program).map_err(|e| format!("cannot write the program: {e}"))?;
    let mut command = Command::new("python3");
    command
        .arg("-I")
        .arg(&script)
        .current_dir(&scratch.0)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    confine(&mut command, limits);
    let mut child = command.spawn().map_err(|e| format!("cannot start python3: {e}"))?;
    let mut stdout = child.stdout.take().ok_or("no stdout")?;
    let cap = limits.output_bytes as u64;
    let reader = std::thread::spawn(move || {
        let mut printed = Vec::new();
        let _ = (&mut stdout).take(cap).read_to_end(&mut printed);
        printed
    });
    // Written on a thread of its own, so a program that prints before it reads cannot hold
    // the grader past the wall-clock limit.
    if let Some(mut stdin) = child.stdin.take() {
        let input = input.to_string();
        std::thread::spawn(move || {
            let _ = stdin.write_all(input.as_bytes());
        });
    }
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() >= limits.wall => {
                kill_group(child.id());
                let _ = child.wait();
                return Err(format!("no result within {:?}", limits.wall));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(format!("waiting for python3: {e}")),
        }
    };
    kill_group(child.id());
    let printed = reader.join().unwrap_or_default();
    if !status.success() {
        return Err(format!("the program exited with {status}"));
    }
    Ok(String::from_utf8_lossy(&printed).into_owned())
}

/// A folder of its own for one run of a program, removed when dropped.
struct Scratch(std::path::PathBuf);

impl Scratch {
    fn new() -> Result<Self, String> {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let serial = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("aiperf-code-{}-{serial}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| format!("cannot make a scratch folder {}: {e}", dir.display()))?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Kills the child's whole process group (what it forked too).
fn kill_group(pid: u32) {
    if let Ok(pid) = i32::try_from(pid) {
        // SAFETY: signalling a process group we created; no memory is touched.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
}

fn confine(command: &mut Command, limits: &Limits) {
    use std::os::unix::process::CommandExt;
    let (cpu_s, memory_bytes) = (limits.cpu_s, limits.memory_bytes);
    // SAFETY: between fork and exec only async-signal-safe calls are made (setsid, setrlimit,
    // unshare), with no allocation.
    unsafe {
        command.pre_exec(move || {
            libc::setsid();
            let limit = |resource, value: u64| {
                let bound = libc::rlimit { rlim_cur: value as libc::rlim_t, rlim_max: value as libc::rlim_t };
                libc::setrlimit(resource, &bound)
            };
            limit(libc::RLIMIT_CPU, cpu_s);
            limit(libc::RLIMIT_AS, memory_bytes);
            limit(libc::RLIMIT_FSIZE, 16 << 20);
            limit(libc::RLIMIT_NOFILE, 64);
            limit(libc::RLIMIT_CORE, 0);
            // A network namespace of its own: as root directly, else inside a user namespace;
            // where neither is allowed (or off Linux) the program keeps the host's network.
            #[cfg(target_os = "linux")]
            if libc::unshare(libc::CLONE_NEWNET) != 0 {
                libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNET);
            }
            Ok(())
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STDIN_TESTS: &str = r#"{"tests": [{"input": "2 3\n", "output": "5\n", "testtype": "stdin"},
        {"input": "10 -4\n", "output": "6", "testtype": "stdin"}], "func_name": null}"#;
    const FUNCTIONAL_TESTS: &str = r#"{"tests": [{"input": "[1, 2, 3]\n2", "output": "[2, 4, 6]", "testtype": "functional"}], "func_name": "scale"}"#;

    fn python_present() -> bool {
        Command::new("python3").arg("--version").output().is_ok_and(|out| out.status.success())
    }

    #[test]
    fn right_wrong_and_malformed_programs() {
        if !python_present() {
            eprintln!("python3 is not installed; the code-execution grader cannot run here");
            return;
        }
        let limits = Limits::default();
        let right = "Here:\n```python\na, b = map(int, input().split())\nprint(a + b)\n```";
        let graded = grade(right, STDIN_TESTS, &limits);
        assert!(graded.correct && !graded.unparsed, "{graded:?}");
        let wrong = "```python\na, b = map(int, input().split())\nprint(a - b)\n```";
        assert!(!grade(wrong, STDIN_TESTS, &limits).correct);
        let malformed = grade("I would add them.", STDIN_TESTS, &limits);
        assert!(!malformed.correct && malformed.unparsed);
        let crash = grade("```python\nraise ValueError\n```", STDIN_TESTS, &limits);
        assert!(!crash.correct && crash.explanation.contains("exited"), "{crash:?}");
        let method = "```python\nclass Solution:\n    def scale(self, xs, k):\n        return [x * k for x in xs]\n```";
        assert!(grade(method, FUNCTIONAL_TESTS, &limits).correct);
    }

    /// Whether this OS lets a child take a network namespace of its own.
    fn namespaces_allowed() -> bool {
        use std::os::unix::process::CommandExt;
        let mut probe = Command::new("true");
        // SAFETY: only unshare is called between fork and exec.
        unsafe {
            probe.pre_exec(|| {
                if libc::unshare(libc::CLONE_NEWNET) == 0
                    || libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNET) == 0
                {
                    Ok(())
                } else {
                    Err(std::io::Error::last_os_error())
                }
            });
        }
        probe.status().is_ok_and(|status| status.success())
    }

    #[test]
    fn the_program_has_no_network_where_the_os_allows_it() {
        if !python_present() || !cfg!(target_os = "linux") {
            return;
        }
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let program = format!(
            "```python\nimport socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), timeout=2)\n    print('connected')\nexcept OSError:\n    print('isolated')\n```"
        );
        let isolated = r#"{"tests": [{"input": "", "output": "isolated", "testtype": "stdin"}]}"#;
        let graded = grade(&program, isolated, &Limits::default());
        match namespaces_allowed() {
            true => assert!(graded.correct, "the program reached the host's loopback: {graded:?}"),
            false => eprintln!("network namespaces are not allowed here; the program keeps the network"),
        }
    }

    #[test]
    fn a_program_that_runs_on_is_stopped_by_the_limits() {
        if !python_present() {
            return;
        }
        let limits = Limits { cpu_s: 1, wall: Duration::from_secs(2), ..Limits::default() };
        let started = Instant::now();
        let graded = grade("```python\nwhile True:\n    pass\n```", STDIN_TESTS, &limits);
        assert!(!graded.correct);
        assert!(started.elapsed() < Duration::from_secs(6), "stopped within the limits: {:?}", started.elapsed());
        let memory = Limits { memory_bytes: 256 << 20, ..Limits::default() };
        let hog = grade("```python\nx = bytearray(1 << 30)\nprint(5)\n```", STDIN_TESTS, &memory);
        assert!(!hog.correct, "a gigabyte is refused under a 256 MiB limit: {hog:?}");
    }
}
