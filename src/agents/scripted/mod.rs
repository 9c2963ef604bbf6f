//! Scripted sessions: a scenario function drives each session, deciding every next request
//! from the answers so far. Each session is a coroutine on one of a few script workers, paused
//! while its step is in flight: the request itself goes out on the runtime, through the run's
//! client, records and metrics, as every request does.

mod clients;
mod conversations;
mod dialects;
mod fibers;
mod history;
mod made_texts;
mod phase;
mod player;
mod porters;
mod replies;
mod session;
mod side_mocks;
mod starts;
mod suspend;
mod tally;
mod tool_shapes;
mod workers;

pub use history::{ChatStep, ToolResult};
pub use player::ScriptedPlayer;
pub use session::{PhaseOver, Session, StepKind};
pub use suspend::{ChildBody, ChildOutputs, in_session, pause_on_children, take_turns};
pub use workers::{ProgramEnd, SessionProgram};
