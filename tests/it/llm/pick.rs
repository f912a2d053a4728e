//! The picker over a fixed inventory: single mode, and tiered mode with its escalation and
//! fallbacks.

use memoir::llm::{provider, Llm, LlmError, ProviderKind};
use memoir::recall::picker::{self, Inventory, Mode};

use super::{cfg, openai, raw, serve, Server};

struct Fixed {
    keys: Vec<String>,
}

impl Inventory for Fixed {
    fn keys(&self) -> &[String] {
        &self.keys
    }
    fn sample(&self, key: &str) -> Result<String, picker::SampleError> {
        Ok(format!("content of {key}"))
    }
}

fn inventory(groups: &[(&str, usize)]) -> Fixed {
    let mut keys = Vec::new();
    for (p, n) in groups {
        for i in 0..*n {
            keys.push(format!("default:{p}.k{i:03}"));
        }
    }
    keys.sort();
    Fixed { keys }
}

fn llm_at(s: &Server) -> Box<dyn Llm> {
    provider(cfg(ProviderKind::OpenAi, &s.url, 5000))
}

#[test]
fn single_mode_is_one_call_over_every_key() {
    let inv = inventory(&[("a", 3), ("b", 2)]);
    let s = serve(vec![openai(
        r#"{"keys": ["default:b.k001", "default:a.k000"]}"#,
    )]);
    let p = picker::pick(llm_at(&s).as_ref(), Mode::Single, "q?", &inv, 10).unwrap();
    assert_eq!(p.keys, ["default:b.k001", "default:a.k000"]);
    let reqs = s.requests();
    assert_eq!(reqs.len(), 1);
    let prompt = reqs[0].body["messages"][1]["content"]
        .as_str()
        .unwrap()
        .to_string();
    for k in &inv.keys {
        assert!(
            prompt.contains(&format!("- {k}: content of {k}")),
            "{k} missing"
        );
    }
    assert_eq!(p.prompts.len(), 1);
    assert!(p.step_timings.contains_key("single"));
}

#[test]
fn tiered_escalates_exactly_above_forty_keys() {
    // 40 keys under `a`: no second step.
    let inv = inventory(&[("a", 40), ("b", 3)]);
    let s = serve(vec![
        openai(r#"{"topics": ["default:a"]}"#),
        openai(r#"{"keys": ["default:a.k007"]}"#),
    ]);
    let p = picker::pick(llm_at(&s).as_ref(), Mode::Tiered, "q?", &inv, 5).unwrap();
    assert_eq!(p.keys, ["default:a.k007"]);
    assert_eq!(s.requests().len(), 2);
    // 41 keys under `a`: a second step over its depth-2 prefixes (the keys themselves here).
    let inv = inventory(&[("a", 41), ("b", 3)]);
    let s = serve(vec![
        openai(r#"{"topics": ["default:a", "default:b"]}"#),
        openai(r#"{"topics": ["default:a.k040"]}"#),
        openai(r#"{"keys": ["default:a.k040", "default:b.k002"]}"#),
    ]);
    let p = picker::pick(llm_at(&s).as_ref(), Mode::Tiered, "q?", &inv, 5).unwrap();
    assert_eq!(p.keys, ["default:a.k040", "default:b.k002"]);
    let reqs = s.requests();
    assert_eq!(reqs.len(), 3);
    let l1 = reqs[0].body["messages"][1]["content"].as_str().unwrap();
    assert!(l1.contains("- default:a: 41") && l1.contains("- default:b: 3"));
    let keys = reqs[2].body["messages"][1]["content"].as_str().unwrap();
    assert!(keys.contains("default:a.k040") && keys.contains("default:b.k000"));
    assert!(!keys.contains("default:a.k039"));
    let steps: Vec<&str> = p.prompts.iter().map(|l| l.step.as_str()).collect();
    assert_eq!(steps, ["l1", "l2:default:a", "keys"]);
}

#[test]
fn tiered_fallbacks_and_none() {
    // Garbage at the first step: the three largest prefixes are descended.
    let inv = inventory(&[("a", 5), ("b", 4), ("c", 3), ("d", 2)]);
    let s = serve(vec![
        openai("I think the answer is 42"),
        openai(r#"{"keys": []}"#),
    ]);
    let p = picker::pick(llm_at(&s).as_ref(), Mode::Tiered, "q?", &inv, 5).unwrap();
    assert!(p.keys.is_empty());
    assert_eq!(p.fallbacks, ["l1"]);
    let keys = s.requests()[1].body["messages"][1]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(keys.contains("default:a.k000") && keys.contains("default:c.k002"));
    assert!(!keys.contains("default:d."));
    // Garbage at the key step is an error carrying what was done.
    let s = serve(vec![
        openai(r#"{"topics": ["default:a"]}"#),
        openai("no idea"),
    ]);
    let e = picker::pick(llm_at(&s).as_ref(), Mode::Tiered, "q?", &inv, 5).unwrap_err();
    assert_eq!(e.step, "keys");
    assert_eq!(e.partial.prompts.len(), 2);
    assert!(matches!(e.llm, Some(LlmError::BadReply(_))), "{e}");
    // A failing model is an error naming the step.
    let s = serve(vec![raw(500, "down")]);
    let e = picker::pick(llm_at(&s).as_ref(), Mode::Tiered, "q?", &inv, 5).unwrap_err();
    assert_eq!(e.step, "l1");
    assert!(matches!(e.llm, Some(LlmError::Status { status: 500, .. })));
}

/// A reply is used only when it is the object the prompt asked for and names only what was
/// offered: a prefix step takes its fallback otherwise, the key step fails.
#[test]
fn replies_in_another_form_are_failed_calls() {
    let inv = inventory(&[("a", 3), ("b", 2)]);
    let prompt_of = |s: &Server| {
        s.requests()[0].body["messages"][1]["content"]
            .as_str()
            .unwrap()
            .to_string()
    };
    // The prompt names the form it wants.
    let s = serve(vec![openai(r#"{"keys": []}"#)]);
    picker::pick(llm_at(&s).as_ref(), Mode::Single, "q?", &inv, 10).unwrap();
    assert!(prompt_of(&s).contains(r#"{"keys": ["<key>", ...]}"#));
    for (reply, why) in [
        ("- default:a.k000\n- default:b.k001", "not a JSON object"),
        ("The first key, default:a.k000, fits.", "not a JSON object"),
        (
            r#"{"keys": ["default:a.k000", "default:c.k000"]}"#,
            "was not offered",
        ),
        (r#"{"keys": ["a.k000"]}"#, "was not offered"),
        (r#"{"keys": "default:a.k000"}"#, "not an array"),
        (
            r#"{"keys": [{"key": "default:a.k000"}]}"#,
            "not only strings",
        ),
        (r#"{"picks": ["default:a.k000"]}"#, "\"keys\" is missing"),
    ] {
        let s = serve(vec![openai(reply)]);
        let e = picker::pick(llm_at(&s).as_ref(), Mode::Single, "q?", &inv, 10).unwrap_err();
        assert_eq!(e.step, "single");
        assert!(e.reason.contains(why), "{reply}: {}", e.reason);
        assert!(matches!(e.llm, Some(LlmError::BadReply(_))));
        assert_eq!(e.partial.prompts[0].reply, reply);
    }
    // The prompt echoed back (the inventory's keys, one per line) is not an answer.
    let s = serve(vec![openai(r#"{"keys": []}"#)]);
    picker::pick(llm_at(&s).as_ref(), Mode::Single, "q?", &inv, 10).unwrap();
    let echo = format!("[echo] model=m\nUser: {}", prompt_of(&s));
    let s = serve(vec![openai(&echo)]);
    let e = picker::pick(llm_at(&s).as_ref(), Mode::Single, "q?", &inv, 10).unwrap_err();
    assert!(e.reason.contains("not a JSON object"), "{}", e.reason);
    // At a prefix step, a prefix that was not offered means the fallback.
    let s = serve(vec![
        openai(r#"{"topics": ["default:a", "default:zz"]}"#),
        openai(r#"{"keys": ["default:b.k000"]}"#),
    ]);
    let p = picker::pick(llm_at(&s).as_ref(), Mode::Tiered, "q?", &inv, 5).unwrap();
    assert_eq!(p.fallbacks, ["l1"]);
    assert_eq!(p.keys, ["default:b.k000"]);
}
