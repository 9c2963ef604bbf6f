//! Execution segments (k6's idea): `--segment I/N` runs a deterministic share of every phase
//! of a plan, so N processes on N machines together send what one process would. `apply` is
//! the one place a plan is cut for a segment; beside it, the load keeps open-loop arrival `k`
//! of the one seeded schedule when `keeps(k)` (k % N == I), and the dataset's conversations are
//! dealt out the same way (`dataset::requests::Prepared::segment_share`).

use serde::{Deserialize, Serialize};

use super::{LoadMode, Phase, Plan, RampedQuantity, ScheduleTrace};

/// Segment `index` of `count` (0-based).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct ExecutionSegment {
    pub index: u32,
    pub count: u32,
}

/// Where a process finds its segment when no `--segment` is given.
pub mod env {
    /// `I/N`, as `--segment` takes it.
    pub const SEGMENT: &str = "AIPERF_SEGMENT";
    /// The number of segments of a Kubernetes Indexed Job (`--segments`).
    pub const SEGMENTS: &str = "AIPERF_SEGMENTS";
    /// A Kubernetes Indexed Job's pod index.
    pub const JOB_COMPLETION_INDEX: &str = "JOB_COMPLETION_INDEX";
    /// Slurm's task rank and task count (the step's count first, when set).
    pub const SLURM_PROCID: &str = "SLURM_PROCID";
    pub const SLURM_STEP_NUM_TASKS: &str = "SLURM_STEP_NUM_TASKS";
    pub const SLURM_NTASKS: &str = "SLURM_NTASKS";
}

impl ExecutionSegment {
    pub fn new(index: u32, count: u32) -> Result<Self, String> {
        if count == 0 {
            return Err("the number of segments must be at least 1".into());
        }
        if index >= count {
            return Err(format!("segment {index} does not exist among {count} (they are numbered 0 to {})", count - 1));
        }
        Ok(Self { index, count })
    }

    /// `I/N`, e.g. `0/4`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let bad = || format!("segment `{text}`: expected I/N, e.g. 0/4 (segment 0 of 4)");
        let (index, count) = text.trim().split_once('/').ok_or_else(bad)?;
        let index = index.trim().parse().map_err(|_| bad())?;
        let count = count.trim().parse().map_err(|_| bad())?;
        Self::new(index, count)
    }

    /// The segment this process runs: `explicit` (`--segment`), else `AIPERF_SEGMENT`, else
    /// Slurm's task rank among the step's tasks (when there are several), else a Kubernetes
    /// Indexed Job's `JOB_COMPLETION_INDEX` of `count` (`--segments` or `AIPERF_SEGMENTS`).
    /// None: the whole plan.
    pub fn resolve(
        explicit: Option<Self>,
        count: Option<u32>,
        var: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<Self>, String> {
        if explicit.is_some() {
            return Ok(explicit);
        }
        if let Some(text) = var(env::SEGMENT) {
            return Self::parse(&text).map(Some).map_err(|e| format!("{}: {e}", env::SEGMENT));
        }
        let number = |name: &str| -> Result<Option<u32>, String> {
            var(name)
                .map(|text| text.trim().parse::<u32>().map_err(|_| format!("{name}=`{text}` is not a whole number")))
                .transpose()
        };
        let count = match count {
            Some(count) => Some(count),
            None => number(env::SEGMENTS)?,
        };
        let slurm_tasks = match number(env::SLURM_STEP_NUM_TASKS)? {
            Some(tasks) => Some(tasks),
            None => number(env::SLURM_NTASKS)?,
        };
        if let (Some(rank), Some(tasks)) = (number(env::SLURM_PROCID)?, slurm_tasks)
            && tasks > 1
        {
            return Self::new(rank, tasks).map(Some).map_err(|e| format!("Slurm task {rank} of {tasks}: {e}"));
        }
        match (number(env::JOB_COMPLETION_INDEX)?, count) {
            (Some(index), Some(count)) => Self::new(index, count).map(Some),
            (Some(index), None) => Err(format!(
                "{}={index} is set but not the number of segments: pass --segments N or set {}",
                env::JOB_COMPLETION_INDEX,
                env::SEGMENTS
            )),
            (None, _) => Ok(None),
        }
    }

    /// This segment's part of `total` things: `total / N`, one more for the first `total % N`
    /// segments, so the parts add up to `total` exactly.
    pub fn share(&self, total: u64) -> u64 {
        let count = u64::from(self.count);
        total / count + u64::from(u64::from(self.index) < total % count)
    }

    /// Whether item `k` of a sequence dealt round-robin (arrivals, conversations) is this segment's.
    pub fn keeps(&self, k: u64) -> bool {
        k % u64::from(self.count) == u64::from(self.index)
    }

    /// The place in the whole run's sequence (`session_num`) of this segment's `local`-th item of
    /// a sequence dealt round-robin: item k is kept by segment k % N, so its j-th is k = j·N + I.
    /// Open-loop arrivals get their number in the one schedule; a phase's N-way split request
    /// count gets 0..count exactly; any phase gets numbers no other segment uses.
    pub fn whole_position(&self, local: u64) -> u64 {
        local * u64::from(self.count) + u64::from(self.index)
    }

    /// The segment that scrapes server metrics and GPU telemetry (the first).
    pub fn collects(&self) -> bool {
        self.index == 0
    }

    /// The folder of its artifacts inside the run's folder: `segment-I-of-N`.
    pub fn folder_name(&self) -> String {
        format!("segment-{}-of-{}", self.index, self.count)
    }

    fn part_of(&self, what: &str, phase: &str, total: u64) -> Result<u64, String> {
        match self.share(total) {
            0 => Err(format!(
                "phase `{phase}`: {what} {total} cannot be split into {} segments (segment {} would get none)",
                self.count, self.index
            )),
            part => Ok(part),
        }
    }

    fn scaled(&self, value: f64) -> f64 {
        value / f64::from(self.count)
    }
}

/// `plan` cut to `segment`: request counts, users and concurrency limits split without
/// remainder errors, session rates and concurrency ramps scaled, a schedule's timestamps dealt
/// out, and the collectors left to the collecting segment. Open-loop arrival rates stay whole:
/// the load keeps this segment's arrivals of the one schedule.
pub fn apply(plan: &Plan, segment: ExecutionSegment) -> Result<Plan, String> {
    let mut cut = plan.clone();
    for phase in &mut cut.phases {
        cut_phase(phase, segment)?;
    }
    if !segment.collects() {
        cut.server_metrics.enabled = false;
        cut.gpu_telemetry.enabled = false;
        cut.gpu_telemetry.dcgm_urls.clear();
    }
    Ok(cut)
}

fn cut_phase(phase: &mut Phase, segment: ExecutionSegment) -> Result<(), String> {
    let name = phase.name.clone();
    if let Some(requests) = phase.requests {
        phase.requests = Some(segment.part_of("its requests", &name, requests)?);
    }
    if let Some(sessions) = phase.sessions {
        phase.sessions = Some(segment.part_of("its sessions", &name, sessions)?);
    }
    let at_least_one = |limit: usize| (segment.share(limit as u64) as usize).max(1);
    match &mut phase.mode {
        LoadMode::Concurrency { concurrency, prefill_concurrency } => {
            *concurrency = segment.part_of("concurrency", &name, *concurrency as u64)? as usize;
            *prefill_concurrency = prefill_concurrency.map(at_least_one);
        }
        LoadMode::Rate { max_concurrency, prefill, .. } => {
            *max_concurrency = max_concurrency.map(at_least_one);
            if let Some(cap) = prefill {
                cap.concurrency = at_least_one(cap.concurrency);
            }
        }
        LoadMode::Ramp { ramped, start, stages, max_concurrency, prefill, .. } => {
            *max_concurrency = max_concurrency.map(at_least_one);
            if let Some(cap) = prefill {
                cap.concurrency = at_least_one(cap.concurrency);
            }
            if *ramped == RampedQuantity::Concurrency {
                *start = segment.scaled(*start);
                for stage in stages.iter_mut() {
                    stage.target = segment.scaled(stage.target);
                }
            }
        }
        LoadMode::Schedule(fixed) => {
            let kept = fixed.kept_timestamps_ms();
            if fixed.auto_offset {
                // The whole trace's first timestamp stays the phase start of every segment.
                fixed.start_offset_ms = kept.first().copied();
                fixed.auto_offset = false;
            }
            let total = kept.len() as u64;
            segment.part_of("its schedule of", &name, total)?;
            let mine = kept.into_iter().enumerate().filter(|(k, _)| segment.keeps(*k as u64)).map(|(_, t)| t);
            match &mut fixed.trace {
                ScheduleTrace::Inline { timestamps_ms } | ScheduleTrace::File { timestamps_ms, .. } => {
                    *timestamps_ms = mine.collect();
                }
            }
        }
        LoadMode::AgenticReplay(_) => {
            return Err(format!(
                "phase `{name}`: an agentic replay keeps its trace's trees whole and runs in one process"
            ));
        }
        LoadMode::AdaptiveScale(_) => {
            return Err(format!("phase `{name}`: an adaptive_scale controller judges all its requests in one process"));
        }
        LoadMode::Users { users, session_rate, .. } => {
            *users = segment.part_of("users", &name, *users as u64)? as usize;
            *session_rate = segment.scaled(*session_rate);
        }
        LoadMode::UserCentric { users, rate, .. } => {
            // Each segment's users keep the whole phase's turn gap (users / rate).
            let mine = segment.part_of("users", &name, *users as u64)? as usize;
            *rate *= mine as f64 / *users as f64;
            *users = mine;
        }
        LoadMode::Scripted { users, session_rate, .. } => {
            *users = segment.part_of("users", &name, *users as u64)? as usize;
            *session_rate = session_rate.map(|rate| segment.scaled(rate));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{
        Arrival, Dataset, Dist, Endpoint, EndpointKind, FixedSchedule, PhaseKind, RampStage, SyntheticDataset,
    };

    fn phase(mode: LoadMode, requests: Option<u64>) -> Phase {
        Phase {
            name: "p".into(),
            kind: PhaseKind::Profiling,
            mode,
            requests,
            sessions: None,
            duration_s: None,
            grace_period_s: 0.0,
            results: true,
            cancel: None,
        }
    }

    fn plan(phases: Vec<Phase>) -> Plan {
        let dist = Dist::fixed(10.0);
        let dataset = Dataset::Synthetic(SyntheticDataset::new(dist.clone(), dist, 1, 10));
        Plan::new("run", Endpoint::new("mock", "m", EndpointKind::Chat, true), dataset, phases, 10.0)
    }

    fn segments(count: u32) -> Vec<ExecutionSegment> {
        (0..count).map(|index| ExecutionSegment::new(index, count).unwrap()).collect()
    }

    #[test]
    fn shares_add_up_without_remainder_errors() {
        for count in 1..=7u32 {
            for total in 0..40u64 {
                let parts: Vec<u64> = segments(count).iter().map(|s| s.share(total)).collect();
                assert_eq!(parts.iter().sum::<u64>(), total, "{total} over {count}");
                assert!(parts.iter().max().unwrap() - parts.iter().min().unwrap() <= 1);
                assert!(parts.windows(2).all(|w| w[0] >= w[1]), "the first segments get the extra ones");
            }
        }
    }

    #[test]
    fn every_arrival_belongs_to_exactly_one_segment() {
        let all = segments(3);
        for k in 0..100 {
            assert_eq!(all.iter().filter(|s| s.keeps(k)).count(), 1);
        }
    }

    #[test]
    fn the_segments_shares_take_the_whole_runs_places_once_each() {
        for count in 1..=5u32 {
            for total in 0..30u64 {
                let mut places: Vec<u64> = segments(count)
                    .iter()
                    .flat_map(|s| (0..s.share(total)).map(move |local| (s, s.whole_position(local))))
                    .inspect(|(s, place)| assert!(s.keeps(*place), "a segment's place is one it keeps"))
                    .map(|(_, place)| place)
                    .collect();
                places.sort_unstable();
                assert_eq!(places, (0..total).collect::<Vec<_>>(), "{total} over {count}");
            }
        }
    }

    #[test]
    fn parse_and_resolve_name_what_is_wrong() {
        assert_eq!(ExecutionSegment::parse("1/4").unwrap(), ExecutionSegment { index: 1, count: 4 });
        assert!(ExecutionSegment::parse("4/4").unwrap_err().contains("numbered 0 to 3"));
        assert!(ExecutionSegment::parse("one/4").unwrap_err().contains("expected I/N"));
        let vars = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| pairs.iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_string())
        };
        let slurm = vars(&[("SLURM_PROCID", "1"), ("SLURM_NTASKS", "2")]);
        assert_eq!(
            ExecutionSegment::resolve(None, None, slurm).unwrap(),
            Some(ExecutionSegment { index: 1, count: 2 })
        );
        let single_task = vars(&[("SLURM_PROCID", "0"), ("SLURM_NTASKS", "1")]);
        assert_eq!(ExecutionSegment::resolve(None, None, single_task).unwrap(), None);
        let indexed = vars(&[("JOB_COMPLETION_INDEX", "2")]);
        assert!(ExecutionSegment::resolve(None, None, indexed).unwrap_err().contains("--segments N"));
        assert_eq!(
            ExecutionSegment::resolve(None, Some(3), indexed).unwrap(),
            Some(ExecutionSegment { index: 2, count: 3 })
        );
        let explicit = ExecutionSegment::new(0, 2).ok();
        assert_eq!(ExecutionSegment::resolve(explicit, None, indexed).unwrap(), explicit);
    }

    #[test]
    fn a_plan_is_split_whole_and_scaled() {
        let closed = phase(LoadMode::Concurrency { concurrency: 5, prefill_concurrency: Some(1) }, Some(11));
        let rate = phase(
            LoadMode::Rate { rate: 30.0, arrival: Arrival::Poisson, max_concurrency: Some(4), seed: 7, prefill: None },
            Some(10),
        );
        let ramp = phase(
            LoadMode::Ramp {
                ramped: RampedQuantity::Concurrency,
                start: 2.0,
                stages: vec![RampStage { duration_s: 1.0, target: 8.0 }],
                arrival: Arrival::Constant,
                seed: 1,
                hold: false,
                max_concurrency: None,
                max_concurrency_ramp_s: None,
                prefill: None,
            },
            None,
        );
        let whole = plan(vec![closed, rate, ramp]);
        let cut: Vec<Plan> = segments(2).into_iter().map(|s| apply(&whole, s).unwrap()).collect();
        let requests = |phase: usize| cut.iter().map(|p| p.phases[phase].requests.unwrap()).collect::<Vec<_>>();
        assert_eq!(requests(0), vec![6, 5]);
        assert_eq!(requests(1), vec![5, 5]);
        assert!(matches!(
            cut[1].phases[0].mode,
            LoadMode::Concurrency { concurrency: 2, prefill_concurrency: Some(1) }
        ));
        assert!(matches!(cut[0].phases[1].mode, LoadMode::Rate { rate: 30.0, max_concurrency: Some(2), .. }));
        let LoadMode::Ramp { start, stages, .. } = &cut[0].phases[2].mode else { panic!("a ramp") };
        assert_eq!((*start, stages[0].target), (1.0, 4.0));
        assert!(cut[0].server_metrics.enabled && !cut[1].server_metrics.enabled, "segment 0 collects");
        assert!(!cut[1].gpu_telemetry.enabled);
        let too_few = plan(vec![phase(LoadMode::Concurrency { concurrency: 1, prefill_concurrency: None }, Some(8))]);
        let error = apply(&too_few, ExecutionSegment::new(1, 2).unwrap()).unwrap_err();
        assert!(error.contains("concurrency 1 cannot be split into 2 segments"), "{error}");
    }

    #[test]
    fn a_schedule_is_dealt_out_from_the_whole_trace_start() {
        let fixed = FixedSchedule {
            trace: ScheduleTrace::Inline { timestamps_ms: vec![1300.0, 1000.0, 1100.0, 1200.0, 900.0] },
            start_offset_ms: Some(950.0),
            end_offset_ms: None,
            auto_offset: true,
            speedup: 1.0,
        };
        let whole = plan(vec![phase(LoadMode::Schedule(fixed), None)]);
        let mut union = Vec::new();
        for segment in segments(2) {
            let cut = apply(&whole, segment).unwrap();
            let LoadMode::Schedule(fixed) = &cut.phases[0].mode else { panic!("a schedule") };
            assert_eq!(fixed.start_offset_ms, Some(1000.0), "the whole trace's first kept timestamp");
            assert!(!fixed.auto_offset);
            union.extend_from_slice(fixed.trace.timestamps_ms());
        }
        assert_eq!(union, vec![1000.0, 1200.0, 1100.0, 1300.0]);
    }
}
