//! Arguments of the document operations (the LangGraph store's reads and writes) as the
//! library's types.

use memoir::app::{Condition, DocumentWrite, FilterOp, MemoirError, Operand};

/// One condition as Python hands it: member path, operator name, and the operand as a
/// number (any float, infinities and NaN included) or as JSON text.
pub type RawCondition = (Vec<String>, String, Option<f64>, Option<String>);

/// The conditions of a document query (an unknown operator or bad JSON: exit 1).
pub fn conditions(raw: Vec<RawCondition>) -> Result<Vec<Condition>, MemoirError> {
    raw.into_iter()
        .map(|(path, op, number, json)| {
            let op = FilterOp::parse(&op).ok_or_else(|| {
                MemoirError::invalid(format!(
                    "unsupported filter operator {op:?} (supported: $eq $ne $gt $gte $lt $lte)"
                ))
            })?;
            let operand = match (number, json) {
                (Some(n), _) => Operand::Number(n),
                (None, Some(text)) => Operand::Json(serde_json::from_str(&text).map_err(|e| {
                    MemoirError::invalid(format!("a filter operand is not JSON: {e}"))
                })?),
                (None, None) => Operand::Json(serde_json::Value::Null),
            };
            Ok(Condition { path, op, operand })
        })
        .collect()
}

/// The writes of a document batch: `(path, JSON text)`, or `(path, None)` to delete.
pub fn writes(raw: Vec<(String, Option<String>)>) -> Vec<DocumentWrite> {
    raw.into_iter()
        .map(|(path, content)| DocumentWrite { path, content })
        .collect()
}
