//! Between the library and Python: outcomes to plain Python values (the contract's JSON),
//! errors to the exceptions of `memoir.errors`, and store work run without the GIL.

use std::panic::{catch_unwind, AssertUnwindSafe};

use memoir::app::{exit, MemoirError, MemoirResult, Outcome};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use serde_json::Value;

/// What store work hands back to the interpreter: the JSON of an outcome and its exit code,
/// or an error's code and message.
pub enum Done {
    /// The outcome's JSON, and its exit code (non-zero: a partial failure).
    Outcome(Value, u8),
    /// An error: its exit code and message.
    Failed(u8, String),
}

/// Runs `work` with the GIL released, turning its outcome into JSON there (so serialisation
/// does not hold the interpreter either). A panic becomes an error with code 1.
pub fn run<O, F>(py: Python<'_>, work: F) -> PyResult<Py<PyAny>>
where
    O: Outcome,
    F: FnOnce() -> MemoirResult<O> + Send,
{
    let done = py.detach(|| match catch_unwind(AssertUnwindSafe(work)) {
        Ok(Ok(outcome)) => Done::Outcome(outcome.to_json(), outcome.exit_code()),
        Ok(Err(e)) => Done::Failed(e.code(), e.to_string()),
        Err(panic) => Done::Failed(exit::ERROR, panic_text(panic.as_ref())),
    });
    finish(py, done)
}

/// The Python value of finished work: the outcome, or the exception it raises.
pub fn finish(py: Python<'_>, done: Done) -> PyResult<Py<PyAny>> {
    match done {
        Done::Outcome(json, exit::OK) => Ok(to_py(py, &json)?.unbind()),
        Done::Outcome(json, code) => {
            let message = json
                .get("error")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| format!("failed (exit {code})"));
            Err(raise(py, code, &message, Some(&json)))
        }
        Done::Failed(code, message) => Err(raise(py, code, &message, None)),
    }
}

/// The exception of exit code `code` (`memoir.errors.error_for_code`), carrying `message`,
/// the code and, for a partial failure, the outcome's JSON as `result`.
pub fn raise(py: Python<'_>, code: u8, message: &str, result: Option<&Value>) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let errors = py.import("memoir.errors")?;
        let class = errors.call_method1("error_for_code", (code,))?;
        let result = match result {
            Some(v) => to_py(py, v)?,
            None => py.None().into_bound(py),
        };
        let exc = class.call1((message, code, result))?;
        Ok(PyErr::from_value(exc))
    };
    build().unwrap_or_else(|e| {
        PyRuntimeError::new_err(format!(
            "{message} (exit {code}; memoir.errors unavailable: {e})"
        ))
    })
}

/// An error raised before any store work (a bad argument), with its exit code.
pub fn invalid(py: Python<'_>, e: MemoirError) -> PyErr {
    raise(py, e.code(), &e.to_string(), None)
}

/// The text of a caught panic.
fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    let what = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown cause".to_string());
    format!("internal error in memoir: {what}")
}

/// A JSON value as plain Python: dict, list, str, int, float, bool or None.
pub fn to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any()
            }
        }
        Value::String(s) => s.into_pyobject(py)?.into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_py(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(members) => {
            let dict = PyDict::new(py);
            for (k, item) in members {
                dict.set_item(k, to_py(py, item)?)?;
            }
            dict.into_any()
        }
    })
}

/// The contract's exit codes by name, for `memoir.errors` and callers.
pub fn exit_codes(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    for (name, code) in [
        ("OK", exit::OK),
        ("ERROR", exit::ERROR),
        ("NOT_FOUND", exit::NOT_FOUND),
        ("USAGE", exit::USAGE),
        ("NOT_A_STORE", exit::NOT_A_STORE),
        ("CONFLICT", exit::CONFLICT),
        ("CORRUPT", exit::CORRUPT),
        ("NON_FAST_FORWARD", exit::NON_FAST_FORWARD),
        ("BUSY", exit::BUSY),
    ] {
        d.set_item(name, code)?;
    }
    Ok(d)
}
