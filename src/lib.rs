//! memoir: git for an AI agent's memory.
//!
//! Layers, bottom up; a layer uses only those below it:
//! - [`store`]: object bytes and refs on a backend;
//! - [`object`]: ids, canonical encoding, verified reads;
//! - [`key`], [`glob`], [`calendar`]: taxonomy keys and their ordered encoding, key
//!   patterns, dates (one layer of shared vocabulary);
//! - [`prolly`]: the counted, content-defined search tree;
//! - [`repo`]: commits, refs and revisions;
//! - [`llm`]: model providers and the reading of their replies;
//! - [`memory`]: memory records and write policies;
//! - [`recall`]: lexical search and the LLM picker;
//! - [`ingest`]: documents (Markdown, text, HTML, PDF) as text, cut into chunks;
//! - [`app`]: the application layer, whose handle [`Memoir`] every face (command line,
//!   MCP, web, Python) calls.
//!
//! A store is created, written and read through [`Memoir`] alone:
//!
//! ```
//! use memoir::app::{Options, ReadPoint, RememberRequest, WriteAs};
//! use memoir::Memoir;
//!
//! let dir = std::env::temp_dir().join(format!("memoir-doc-{}", std::process::id()));
//! # let _ = std::fs::remove_dir_all(&dir);
//! let ada = WriteAs::author("Ada <ada@example.org>");
//! let (memoir, _) = Memoir::create(&dir, Options::default(), &ada)?;
//! let fact = RememberRequest::new("Production runs PostgreSQL 16", &["infra.database"]);
//! memoir.remember(&fact, &ada)?;
//! let got = memoir.get(&["infra.database".into()], None, &ReadPoint::head())?;
//! let content = got.items[0].record.as_ref().map(|r| r.content());
//! assert_eq!(content.as_deref(), Some("Production runs PostgreSQL 16"));
//! # drop(memoir);
//! # std::fs::remove_dir_all(&dir).ok();
//! # Ok::<(), memoir::app::MemoirError>(())
//! ```
#![warn(missing_docs)]

// One group per layer, bottom up (blank lines keep rustfmt from sorting the layers).
pub mod store;

pub mod object;

pub mod calendar;
pub mod glob;
#[cfg(feature = "http")]
mod http;
pub mod key;

pub mod prolly;

pub mod repo;

pub mod llm;

pub mod embed;

pub mod memory;

pub mod recall;

pub mod ingest;

pub mod app;

pub use app::Memoir;

/// The optional parts of the library this build has, by cargo feature name (`remote`, `http`,
/// `testing`), for a face's version text.
pub const FEATURES: &[&str] = &[
    #[cfg(feature = "remote")]
    "remote",
    #[cfg(feature = "http")]
    "http",
    #[cfg(feature = "testing")]
    "testing",
];
