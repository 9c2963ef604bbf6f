//! The coding corpus (`--prompt-corpus coding`): text shaped like what a coding agent's context
//! holds — source files in Python, Rust, Go and TypeScript, shell sessions, JSON answers,
//! tracebacks, diffs, SQL, configs, logs, docs and developers' requests — made once from this
//! project's own templates with a fixed seed, so that every run and machine cuts the same text.
//! Unlike the Shakespeare corpus its whitespace (newlines, indentation) is kept.

use std::sync::OnceLock;

use crate::rng::SeededRng;

/// Blocks made: about 1.1 MB of text, 465,000 GPT-2 tokens.
const BLOCKS: usize = 2_400;
/// The corpus's seed: the text is fixed, whatever the run's seed.
const SEED: u64 = 0x00C0_DEC0_4B05;

/// The corpus, made the first time it is asked for.
pub fn text() -> &'static str {
    static TEXT: OnceLock<String> = OnceLock::new();
    TEXT.get_or_init(make)
}

fn make() -> String {
    let mut words = Words(SeededRng::new(SEED));
    let makers: [fn(&mut Words) -> String; 14] =
        [python, rust, go, typescript, shell, json, traceback, diff, sql, yaml, log, markdown, request, test_run];
    let blocks: Vec<String> = (0..BLOCKS).map(|index| makers[index % makers.len()](&mut words)).collect();
    // Interleave the kinds unevenly, as a context mixes them.
    let mut order: Vec<usize> = (0..blocks.len()).collect();
    for i in (1..order.len()).rev() {
        let j = words.0.below(i as u64 + 1) as usize;
        order.swap(i, j);
    }
    let mut text = String::with_capacity(blocks.iter().map(String::len).sum::<usize>() + 2 * blocks.len());
    for index in order {
        text.push_str(&blocks[index]);
        text.push_str("\n\n");
    }
    text
}

const MODULES: &[&str] = &[
    "billing",
    "ingest",
    "scheduler",
    "auth",
    "catalog",
    "search",
    "gateway",
    "ledger",
    "notify",
    "export",
    "upload",
    "sessions",
    "quota",
    "telemetry",
    "routing",
    "planner",
    "checkout",
    "inventory",
    "audit",
    "sync",
];
const NOUNS: &[&str] = &[
    "order", "invoice", "user", "token", "batch", "record", "shard", "job", "event", "report", "tenant", "cursor",
    "snapshot", "segment", "request", "payload", "window", "account", "bucket", "lease",
];
const VERBS: &[&str] = &[
    "load",
    "store",
    "fetch",
    "parse",
    "merge",
    "split",
    "flush",
    "render",
    "retry",
    "validate",
    "encode",
    "apply",
    "resolve",
    "refresh",
    "publish",
    "collect",
    "schedule",
    "reconcile",
    "compact",
    "expire",
];
const TYPES: &[&str] =
    &["Config", "Client", "Store", "Queue", "Cache", "Worker", "Handler", "Index", "Pool", "Registry"];
const FILES_EXT: &[&str] = &["py", "rs", "go", "ts"];
const LEVELS: &[&str] = &["INFO", "INFO", "INFO", "DEBUG", "WARN", "ERROR"];
const ASKS: &[&str] = &[
    "Can you find out why {n} {v}s fail after a restart of the {m} service?",
    "Please refactor `{v}_{n}` in {m}/{n}.{x} so that it no longer holds the lock while it waits on the network.",
    "The CI job for {m} has been red since yesterday; the {n} tests time out. What changed?",
    "Add a `--dry-run` flag to the {m} CLI that prints what it would {v} without touching the database.",
    "Why does `{v}_{n}` return an empty list when the {n} has no {m} entry? I expected an error.",
    "Write a test that covers the case where two workers {v} the same {n} at once.",
    "Explain what the {t} in {m} does with a stale {n}, and whether we can drop the retry loop.",
    "Measure how long `{v}_{n}` takes on a table of a million rows and suggest an index.",
    "Rename {t} to {N}{t} everywhere in {m}, including the docs and the migrations.",
    "The {m} dashboard shows p99 latency doubling at noon. Look at the logs and tell me what you see.",
];

/// Draws from the lists above.
struct Words(SeededRng);

impl Words {
    fn pick<'a>(&mut self, list: &[&'a str]) -> &'a str {
        list[self.0.below(list.len() as u64) as usize]
    }
    fn module(&mut self) -> &'static str {
        self.pick(MODULES)
    }
    fn noun(&mut self) -> &'static str {
        self.pick(NOUNS)
    }
    fn verb(&mut self) -> &'static str {
        self.pick(VERBS)
    }
    fn type_name(&mut self) -> String {
        format!("{}{}", capital(self.noun()), self.pick(TYPES))
    }
    fn number(&mut self, below: u64) -> u64 {
        self.0.below(below)
    }
    fn hex(&mut self, digits: usize) -> String {
        format!("{:016x}", self.0.next_u64())[..digits].to_string()
    }
    fn path(&mut self) -> String {
        let ext = self.pick(FILES_EXT);
        format!("{}/{}_{}.{ext}", self.module(), self.verb(), self.noun())
    }
    fn time(&mut self) -> String {
        format!(
            "2026-11-{:02}T{:02}:{:02}:{:02}.{:03}Z",
            1 + self.number(28),
            self.number(24),
            self.number(60),
            self.number(60),
            self.number(1000)
        )
    }
}

fn capital(word: &str) -> String {
    let mut chars = word.chars();
    chars.next().map_or_else(String::new, |first| first.to_uppercase().chain(chars).collect())
}

fn python(w: &mut Words) -> String {
    let (module, noun, verb, other) = (w.module(), w.noun(), w.verb(), w.noun());
    let class = w.type_name();
    let limit = 10 + w.number(990);
    format!(
        "# {module}/{noun}.py\nfrom __future__ import annotations\n\nimport logging\nfrom dataclasses import dataclass, field\n\nlog = logging.getLogger(__name__)\n\n\n@dataclass\nclass {class}:\n    {noun}_id: str\n    {other}s: list[str] = field(default_factory=list)\n    limit: int = {limit}\n\n    def {verb}(self, {other}: str) -> bool:\n        \"\"\"{} one {other} unless the limit is reached.\"\"\"\n        if len(self.{other}s) >= self.limit:\n            log.warning(\"%s: limit of %d reached\", self.{noun}_id, self.limit)\n            return False\n        self.{other}s.append({other})\n        return True\n\n\ndef {verb}_all(items: list[{class}]) -> dict[str, int]:\n    counts: dict[str, int] = {{}}\n    for item in items:\n        try:\n            counts[item.{noun}_id] = len(item.{other}s)\n        except (KeyError, AttributeError) as error:\n            log.error(\"cannot {verb} %r: %s\", item, error)\n    return counts",
        capital(verb)
    )
}

fn rust(w: &mut Words) -> String {
    let (noun, verb, other) = (w.noun(), w.verb(), w.noun());
    let name = w.type_name();
    let capacity = 16 << w.number(6);
    format!(
        "use std::collections::HashMap;\n\n/// Keeps each {noun}'s {other}s, {capacity} at most.\npub struct {name} {{\n    {other}s: HashMap<u64, Vec<String>>,\n}}\n\nimpl {name} {{\n    pub fn new() -> Self {{\n        Self {{ {other}s: HashMap::with_capacity({capacity}) }}\n    }}\n\n    pub fn {verb}(&mut self, {noun}: u64, {other}: &str) -> Result<usize, Error> {{\n        let entry = self.{other}s.entry({noun}).or_default();\n        if entry.len() >= {capacity} {{\n            return Err(Error::Full({noun}));\n        }}\n        entry.push({other}.to_owned());\n        Ok(entry.len())\n    }}\n}}\n\n#[cfg(test)]\nmod tests {{\n    use super::*;\n\n    #[test]\n    fn a_{noun}_takes_{other}s_until_full() {{\n        let mut store = {name}::new();\n        assert_eq!(store.{verb}(7, \"a\").unwrap(), 1);\n    }}\n}}"
    )
}

fn go(w: &mut Words) -> String {
    let (module, noun, verb) = (w.module(), w.noun(), w.verb());
    let name = w.type_name();
    let timeout = 1 + w.number(30);
    format!(
        "package {module}\n\nimport (\n\t\"context\"\n\t\"fmt\"\n\t\"time\"\n)\n\n// {name} handles the {noun}s of the {module} service.\ntype {name} struct {{\n\tclient  *http.Client\n\ttimeout time.Duration\n}}\n\nfunc New{name}() *{name} {{\n\treturn &{name}{{client: http.DefaultClient, timeout: {timeout} * time.Second}}\n}}\n\nfunc (s *{name}) {}(ctx context.Context, id string) error {{\n\tctx, cancel := context.WithTimeout(ctx, s.timeout)\n\tdefer cancel()\n\tif id == \"\" {{\n\t\treturn fmt.Errorf(\"{verb} {noun}: empty id\")\n\t}}\n\tresp, err := s.client.Do(req.WithContext(ctx))\n\tif err != nil {{\n\t\treturn fmt.Errorf(\"{verb} {noun} %s: %w\", id, err)\n\t}}\n\tdefer resp.Body.Close()\n\treturn nil\n}}",
        capital(verb)
    )
}

fn typescript(w: &mut Words) -> String {
    let (module, noun, verb, other) = (w.module(), w.noun(), w.verb(), w.noun());
    let name = w.type_name();
    format!(
        "import {{ z }} from \"zod\";\n\nexport interface {name} {{\n  id: string;\n  {other}Count: number;\n  updatedAt?: Date;\n}}\n\nconst {noun}Schema = z.object({{ id: z.string(), {other}Count: z.number().int() }});\n\nexport async function {verb}{}(id: string): Promise<{name}> {{\n  const response = await fetch(`/api/{module}/{noun}s/${{id}}`);\n  if (!response.ok) {{\n    throw new Error(`{verb} {noun} ${{id}}: ${{response.status}}`);\n  }}\n  const body = {noun}Schema.parse(await response.json());\n  return {{ ...body, updatedAt: new Date() }};\n}}",
        capital(noun)
    )
}

fn shell(w: &mut Words) -> String {
    let module = w.module();
    let mut lines = vec![format!("$ ls -la {module}/")];
    for _ in 0..3 + w.number(6) {
        let size = 200 + w.number(40_000);
        lines.push(format!(
            "-rw-r--r--  1 dev  staff  {size:>6} Nov {:>2} {:02}:{:02} {}_{}.py",
            1 + w.number(28),
            w.number(24),
            w.number(60),
            w.verb(),
            w.noun()
        ));
    }
    lines.push(format!("$ git status --short\n M {}\n?? {}", w.path(), w.path()));
    lines.push(format!(
        "$ kubectl get pods -n {module}\nNAME                          READY   STATUS    RESTARTS   AGE"
    ));
    for _ in 0..2 + w.number(4) {
        let status = if w.number(5) == 0 { "CrashLoopBackOff" } else { "Running" };
        lines.push(format!(
            "{module}-{}-{}   1/1     {status:<9} {:<10} {}h",
            w.hex(9),
            w.hex(5),
            w.number(4),
            1 + w.number(90)
        ));
    }
    lines.join("\n")
}

fn json(w: &mut Words) -> String {
    let (noun, other) = (w.noun(), w.noun());
    let items: Vec<String> = (0..1 + w.number(4))
        .map(|_| {
            format!(
                "    {{\n      \"id\": \"{}-{}\",\n      \"{other}\": {},\n      \"status\": \"{}\",\n      \"updated_at\": \"{}\"\n    }}",
                noun,
                w.hex(8),
                w.number(10_000),
                w.pick(&["active", "pending", "failed", "archived"]),
                w.time()
            )
        })
        .collect();
    format!(
        "{{\n  \"{noun}s\": [\n{}\n  ],\n  \"next_cursor\": \"{}\",\n  \"total\": {}\n}}",
        items.join(",\n"),
        w.hex(12),
        w.number(100_000)
    )
}

fn traceback(w: &mut Words) -> String {
    let (module, noun, verb) = (w.module(), w.noun(), w.verb());
    let line = 20 + w.number(400);
    format!(
        "Traceback (most recent call last):\n  File \"/srv/app/{module}/cli.py\", line {}, in main\n    result = {verb}_{noun}(args.{noun}_id)\n  File \"/srv/app/{module}/{noun}.py\", line {line}, in {verb}_{noun}\n    return store[{noun}_id].{verb}()\n           ~~~~~^^^^^^^^^^\nKeyError: '{noun}-{}'",
        10 + w.number(90),
        w.hex(6)
    )
}

fn diff(w: &mut Words) -> String {
    let path = w.path();
    let (verb, noun) = (w.verb(), w.noun());
    let start = 1 + w.number(300);
    format!(
        "diff --git a/{path} b/{path}\nindex {}..{} 100644\n--- a/{path}\n+++ b/{path}\n@@ -{start},7 +{start},9 @@\n     {noun} = lookup({noun}_id)\n-    if {noun} is None:\n-        return None\n+    if {noun} is None:\n+        raise LookupError(f\"no {noun} {{{noun}_id}}\")\n+    if {noun}.expired():\n+        {noun}.refresh()\n     {verb}({noun})\n     return {noun}",
        w.hex(7),
        w.hex(7)
    )
}

fn sql(w: &mut Words) -> String {
    let (noun, other) = (w.noun(), w.noun());
    format!(
        "SELECT {noun}.id, {noun}.created_at, COUNT({other}.id) AS {other}_count\nFROM {noun}s AS {noun}\nLEFT JOIN {other}s AS {other} ON {other}.{noun}_id = {noun}.id\nWHERE {noun}.tenant_id = $1\n  AND {noun}.created_at >= NOW() - INTERVAL '{} days'\nGROUP BY {noun}.id\nORDER BY {other}_count DESC\nLIMIT {};",
        1 + w.number(90),
        10 * (1 + w.number(20))
    )
}

fn yaml(w: &mut Words) -> String {
    let module = w.module();
    format!(
        "service: {module}\nreplicas: {}\nresources:\n  limits:\n    cpu: \"{}\"\n    memory: {}Gi\nenv:\n  - name: {}_URL\n    value: postgres://{module}-db:5432/{module}\n  - name: LOG_LEVEL\n    value: {}\nhealthcheck:\n  path: /healthz\n  interval_seconds: {}",
        1 + w.number(8),
        1 + w.number(8),
        1 + w.number(32),
        module.to_uppercase(),
        w.pick(&["info", "debug", "warn"]),
        5 + w.number(55)
    )
}

fn log(w: &mut Words) -> String {
    let module = w.module();
    (0..4 + w.number(8))
        .map(|_| {
            let level = w.pick(LEVELS);
            format!(
                "{} {level:<5} {module}.{}: {} {} in {} ms (id={})",
                w.time(),
                w.noun(),
                w.verb(),
                w.noun(),
                w.number(2_000),
                w.hex(10)
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn markdown(w: &mut Words) -> String {
    let (module, noun, verb) = (w.module(), w.noun(), w.verb());
    format!(
        "## {}: {verb} a {noun}\n\nThe `{module}` service runs `{verb}` on each {noun} once its {} arrives. Run it locally with:\n\n```bash\nmake dev SERVICE={module}\ncurl -s localhost:{}/{noun}s | jq '.total'\n```\n\n| option | default | meaning |\n|---|---|---|\n| `--{noun}-limit` | {} | {noun}s kept per tenant |\n| `--retry` | {} | tries before giving up |",
        capital(module),
        w.noun(),
        8000 + w.number(1000),
        10 * (1 + w.number(50)),
        1 + w.number(5)
    )
}

fn request(w: &mut Words) -> String {
    let ask = w.pick(ASKS);
    ask.replace("{m}", w.module())
        .replace("{n}", w.noun())
        .replace("{v}", w.verb())
        .replace("{x}", w.pick(FILES_EXT))
        .replace("{N}", &capital(w.noun()))
        .replace("{t}", w.pick(TYPES))
}

fn test_run(w: &mut Words) -> String {
    let module = w.module();
    let passed = 20 + w.number(400);
    let failed = w.number(3);
    let mut lines = vec![format!("$ pytest tests/{module} -q")];
    for _ in 0..failed {
        lines.push(format!(
            "FAILED tests/{module}/test_{}.py::test_{}_{} - AssertionError: assert {} == {}",
            w.noun(),
            w.verb(),
            w.noun(),
            w.number(100),
            w.number(100)
        ));
    }
    lines.push(format!("{passed} passed, {failed} failed in {}.{:02}s", w.number(60), w.number(100)));
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_corpus_is_fixed_and_keeps_code_shaped() {
        let corpus = text();
        assert_eq!(corpus, make(), "the same text every time");
        assert!((400_000..2_000_000).contains(&corpus.len()), "{}", corpus.len());
        for shape in ["def ", "impl ", "func (", "async function", "$ git status", "Traceback", "diff --git", "SELECT "]
        {
            assert!(corpus.contains(shape), "{shape}");
        }
        assert!(corpus.contains("\n    "), "indentation is kept");
    }
}
