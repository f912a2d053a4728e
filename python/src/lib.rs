//! `memoir._memoir`: the Python face of memoir, a thin adapter over [`memoir::Memoir`].
//!
//! Each method of the Python `Memoir` class builds the request of one operation, runs it
//! with the GIL released, and hands back the outcome as the plain Python value of the JSON
//! `memoir --json` prints. Failures become exceptions of the `memoir.errors` hierarchy, each
//! carrying the exit code of the command-line contract; a panic is caught and reported as an
//! error (code 1), never unwound into the interpreter.

mod convert;
mod documents;
mod embedder;
mod handle;
mod settings;

use pyo3::prelude::*;

/// The extension module: the `Memoir` class and the library's version.
#[pymodule]
fn _memoir(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<handle::PyMemoir>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("EXIT_CODES", convert::exit_codes(m.py())?)?;
    Ok(())
}
