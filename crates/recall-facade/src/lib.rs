//! A small session API for agent loops: configure roots, selector and telemetry once, then begin
//! a turn, take the initial delivery, take the tool-result delivery, end the turn.
//!
//! It is wiring only; behaviour lives in the crates below it. It knows nothing of the command
//! line.
