//! One question of a benchmark as it is asked and graded: the prompt (and its chat form and
//! stop, where they differ), the task it counts towards, the gold answer its grader compares
//! with, and the answer length it may take.

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Problem {
    /// Its task, subject or category (the benchmark's name when it has none).
    pub task: String,
    /// The user message (a chat endpoint) or the prompt (completions), shots included.
    pub prompt: String,
    /// What the grader compares the answer with (a letter, a number, a LaTeX answer, tests).
    pub gold: String,
    /// Output tokens the answer may take.
    pub max_tokens: u64,
    /// The messages a chat endpoint is sent instead of `prompt` as one user message, when the
    /// benchmark asks otherwise over chat (MMLU: each worked example a user and an assistant turn).
    pub chat: Vec<ChatMessage>,
    /// Where the answer must stop (none: the request asks no `stop`).
    pub stop: Vec<String>,
}

/// One message of a question asked as a chat.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatMessage {
    pub role: &'static str,
    pub content: String,
}

/// How a benchmark's questions are asked: its tasks (empty: all), shots and chain of thought.
#[derive(Debug, Clone, PartialEq)]
pub struct Asking {
    pub tasks: Vec<String>,
    pub n_shots: u32,
    pub cot: bool,
}

impl Asking {
    /// Whether `task` is asked (every task when none or `all` is named).
    pub fn asks(&self, task: &str) -> bool {
        self.tasks.is_empty() || self.tasks.iter().any(|wanted| wanted == "all" || wanted == task)
    }

    /// The tasks asked: all of `all_tasks` when none or `all` is named, else those named, in
    /// the order named; a name that is not one of them is an error naming the benchmark and
    /// listing its tasks.
    pub fn chosen<'a>(&self, benchmark: &str, all_tasks: &[&'a str]) -> anyhow::Result<Vec<&'a str>> {
        if self.tasks.is_empty() || self.tasks.iter().any(|task| task == "all") {
            return Ok(all_tasks.to_vec());
        }
        self.tasks
            .iter()
            .map(|wanted| {
                all_tasks.iter().copied().find(|task| task == wanted).ok_or_else(|| {
                    anyhow::anyhow!(
                        "accuracy benchmark {benchmark}: task `{wanted}` is not one of its tasks: {}",
                        all_tasks.join(", ")
                    )
                })
            })
            .collect()
    }
}

/// `A`, `B`, … for choice `index`.
pub fn letter(index: usize) -> char {
    (b'A' + (index % 26) as u8) as char
}
