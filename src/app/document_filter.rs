//! Conditions on the JSON object a record holds (a document): the value at a path of member
//! names compared with an operand. They select the documents of
//! [`Memoir::find_documents`](super::Memoir::find_documents) inside the library, so a face
//! never reads every record of a namespace to filter them itself.

use std::cmp::Ordering;

use serde_json::Value;

/// How a condition compares the value at its path with its operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FilterOp {
    /// Equal (numbers by value: `1` equals `1.0`; objects and arrays member by member).
    Eq,
    /// Not equal (a missing value is null, so it differs from any other operand).
    Ne,
    /// Greater than (numbers with numbers, text with text; anything else never holds).
    Gt,
    /// Greater than or equal.
    Gte,
    /// Less than.
    Lt,
    /// Less than or equal.
    Lte,
}

impl FilterOp {
    /// The operator of its name with or without a leading `$` (`eq`, `$gte`, ...).
    pub fn parse(name: &str) -> Option<FilterOp> {
        Some(match name.trim_start_matches('$') {
            "eq" => FilterOp::Eq,
            "ne" => FilterOp::Ne,
            "gt" => FilterOp::Gt,
            "gte" => FilterOp::Gte,
            "lt" => FilterOp::Lt,
            "lte" => FilterOp::Lte,
            _ => return None,
        })
    }
}

/// What a value is compared with.
#[derive(Debug, Clone, PartialEq)]
pub enum Operand {
    /// A number, which may be infinite or NaN (NaN equals nothing and orders with nothing).
    Number(f64),
    /// Any JSON value.
    Json(Value),
}

/// One condition: the value at `path` (member names from the document's top; a missing
/// member reads as null) compared by `op` with `operand`.
#[derive(Debug, Clone, PartialEq)]
pub struct Condition {
    /// Member names, outermost first (`["user", "access-level"]`).
    pub path: Vec<String>,
    /// The comparison.
    pub op: FilterOp,
    /// What the value is compared with.
    pub operand: Operand,
}

impl Condition {
    /// Whether `doc` satisfies the condition.
    pub fn holds(&self, doc: &Value) -> bool {
        let mut at = Some(doc);
        for name in &self.path {
            at = at.and_then(|v| v.get(name.as_str()));
        }
        let value = at.unwrap_or(&Value::Null);
        match self.op {
            FilterOp::Eq => equals(value, &self.operand),
            FilterOp::Ne => !equals(value, &self.operand),
            FilterOp::Gt => order(value, &self.operand) == Some(Ordering::Greater),
            FilterOp::Gte => matches!(
                order(value, &self.operand),
                Some(Ordering::Greater | Ordering::Equal)
            ),
            FilterOp::Lt => order(value, &self.operand) == Some(Ordering::Less),
            FilterOp::Lte => matches!(
                order(value, &self.operand),
                Some(Ordering::Less | Ordering::Equal)
            ),
        }
    }
}

/// Whether `doc` satisfies every condition (none: every document does).
pub fn all_hold(conditions: &[Condition], doc: &Value) -> bool {
    conditions.iter().all(|c| c.holds(doc))
}

fn equals(value: &Value, operand: &Operand) -> bool {
    match operand {
        Operand::Number(n) => value.as_f64().is_some_and(|v| v == *n),
        Operand::Json(w) => json_equal(value, w),
    }
}

/// JSON equality with numbers compared by value.
fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_equal(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => a == b,
    }
}

fn order(value: &Value, operand: &Operand) -> Option<Ordering> {
    match (value, operand) {
        (Value::Number(v), Operand::Number(n)) => v.as_f64()?.partial_cmp(n),
        (Value::Number(v), Operand::Json(Value::Number(n))) => {
            v.as_f64()?.partial_cmp(&n.as_f64()?)
        }
        (Value::String(v), Operand::Json(Value::String(s))) => Some(v.as_str().cmp(s.as_str())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cond(path: &[&str], op: FilterOp, operand: Operand) -> Condition {
        Condition {
            path: path.iter().map(|s| s.to_string()).collect(),
            op,
            operand,
        }
    }

    #[test]
    fn nested_paths_and_operators() {
        let doc = json!({"price": 10, "user": {"access-level": "nested"}, "tags": ["a"]});
        let nested = Operand::Json(json!("nested"));
        assert!(cond(&["user", "access-level"], FilterOp::Eq, nested.clone()).holds(&doc));
        assert!(!cond(&["access-level"], FilterOp::Eq, nested).holds(&doc));
        assert!(cond(&["price"], FilterOp::Eq, Operand::Number(10.0)).holds(&doc));
        assert!(cond(&["price"], FilterOp::Gt, Operand::Number(f64::NEG_INFINITY)).holds(&doc));
        assert!(cond(&["price"], FilterOp::Lt, Operand::Number(f64::INFINITY)).holds(&doc));
        assert!(!cond(&["price"], FilterOp::Eq, Operand::Number(f64::NAN)).holds(&doc));
        assert!(!cond(&["price"], FilterOp::Gt, Operand::Json(json!("5"))).holds(&doc));
        assert!(cond(&["tags"], FilterOp::Eq, Operand::Json(json!(["a"]))).holds(&doc));
        assert!(cond(&["missing"], FilterOp::Ne, Operand::Json(json!("x"))).holds(&doc));
        assert!(cond(&["price"], FilterOp::Eq, Operand::Json(json!(10.0))).holds(&doc));
    }

    #[test]
    fn operator_names() {
        assert_eq!(FilterOp::parse("$gte"), Some(FilterOp::Gte));
        assert_eq!(FilterOp::parse("ne"), Some(FilterOp::Ne));
        assert_eq!(FilterOp::parse("$in"), None);
    }
}
