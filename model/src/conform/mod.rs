//! Trace validation: whether a run of the real system is a behaviour of
//! the model.
//!
//! A translator (the real-cluster tooling's) turns a real trace into
//! [`Observation`]s: the changes RocketMQ's own events show, each a value
//! of something the model has too (a broker's member table, a consumer's
//! queues, its life) or a fault the consumer meets. [`conform`] then
//! searches, exhaustively over
//! (model state, position in the trace), for a run of the model that makes
//! exactly these changes in this order, allowing steps the trace cannot
//! see between them (bounded) and observations of different actors close
//! in time in either order; a run that ended at rest must end in a state
//! of the model at rest, reached by steps the trace cannot see. An observation no state of the model has (a
//! client, consumer, topic or queue it lacks) is a mismatch at once,
//! whatever the bounds. The answer is exact within the bounds: it
//! conforms, it does not (with the first observation no run explains, a
//! state it could not be explained in and the steps the model had there),
//! or a bound cut the search short.

mod observation;
mod search;

pub use observation::{fault_name, observable_fault, Observation, Observed};
pub use search::{conform, Bounds, Conformance, End, Unseen, Verdict, CONFORMS};
