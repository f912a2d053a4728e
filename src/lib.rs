//! memoir: git for an AI agent's memory.
//!
//! Layers, bottom up: [`store`] (object bytes and refs on a backend), [`object`] (ids,
//! canonical encoding, verified reads), [`key`] (taxonomy keys and their ordered encoding),
//! [`prolly`] (the counted, content-defined search tree).
#![warn(missing_docs)]

pub mod glob;
pub mod key;
pub mod llm;
pub mod object;
pub mod prolly;
pub mod recall;
pub mod repo;
pub mod store;
