//! memoir: git for an AI agent's memory.
//!
//! Layers, bottom up: [`store`] (object bytes and refs on a backend), [`object`] (ids,
//! canonical encoding, verified reads), [`key`] (taxonomy keys and their ordered encoding)
//! and [`calendar`] (dates), [`prolly`] (the counted, content-defined search tree), [`repo`]
//! (commits and refs), [`memory`] (memory records and write policies), [`recall`] (lexical
//! search and the LLM picker), [`llm`] (model providers).
#![warn(missing_docs)]

pub mod calendar;
pub mod glob;
pub mod key;
pub mod llm;
pub mod memory;
pub mod object;
pub mod prolly;
pub mod recall;
pub mod repo;
pub mod store;
