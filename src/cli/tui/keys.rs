//! What each key does: in the prompt, in the branch picker, then on each screen.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use memoir::app::ReadPoint;

use super::state::{App, Prompt, Screen};

/// Rows moved by Page Up and Page Down.
const PAGE: isize = 20;

/// Acts on one key press.
pub fn press(app: &mut App<'_>, key: KeyEvent) {
    if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
        app.quit = true;
        return;
    }
    if app.prompt.is_some() {
        prompt_key(app, key.code);
        return;
    }
    if app.picker.is_some() {
        picker_key(app, key.code);
        return;
    }
    if app.help {
        app.help = false;
        return;
    }
    app.message = None;
    match key.code {
        KeyCode::Char('q') => app.quit = true,
        KeyCode::Char('?') => app.help = true,
        KeyCode::Char('1') | KeyCode::Char('t') => app.go(Screen::Tree),
        KeyCode::Char('2') | KeyCode::Char('l') => {
            if app.log.is_empty() {
                app.load_log();
            }
            app.go(Screen::Log);
        }
        KeyCode::Char('3') | KeyCode::Char('/') => {
            app.prompt = Some(Prompt::Search(app.search_query.clone()));
        }
        KeyCode::Char('r') => {
            let typed = app.point.at.clone().unwrap_or_default();
            app.prompt = Some(Prompt::Revision(typed));
        }
        KeyCode::Char('b') => app.open_picker(),
        KeyCode::Char('H') => app.switch_to(ReadPoint::head()),
        KeyCode::Esc | KeyCode::Backspace | KeyCode::Left | KeyCode::Char('h') => app.go_back(),
        code => screen_key(app, code),
    }
}

/// A row movement of a list key, if it is one.
fn movement(code: KeyCode) -> Option<isize> {
    match code {
        KeyCode::Up | KeyCode::Char('k') => Some(-1),
        KeyCode::Down | KeyCode::Char('j') => Some(1),
        KeyCode::PageUp => Some(-PAGE),
        KeyCode::PageDown => Some(PAGE),
        KeyCode::Home | KeyCode::Char('g') => Some(isize::MIN / 2),
        KeyCode::End | KeyCode::Char('G') => Some(isize::MAX / 2),
        _ => None,
    }
}

fn is_open(code: KeyCode) -> bool {
    matches!(code, KeyCode::Enter | KeyCode::Right)
}

/// Keys of the screen shown.
fn screen_key(app: &mut App<'_>, code: KeyCode) {
    match app.screen {
        Screen::Tree => {
            let len = app.tree.level.as_ref().map_or(0, |l| l.children.len());
            if let Some(d) = movement(code) {
                app.tree.cursor.step(d, len);
            } else if is_open(code) {
                app.tree_open(false);
            } else if code == KeyCode::Char('m') {
                app.tree_open(true);
            } else if code == KeyCode::Char('n') {
                app.next_namespace();
            } else if code == KeyCode::Char(']') {
                app.tree_page(1);
            } else if code == KeyCode::Char('[') {
                app.tree_page(-1);
            }
        }
        Screen::Memory => {
            if let (Some(d), Some(m)) = (movement(code), app.memory.as_mut()) {
                let next = i64::from(m.scroll) + d.clamp(-1000, 1000) as i64;
                m.scroll = next.clamp(0, i64::from(u16::MAX)) as u16;
            }
        }
        Screen::Log => {
            if let Some(d) = movement(code) {
                app.log_cursor.step(d, app.log.len());
            } else if is_open(code) {
                app.open_commit();
            }
        }
        Screen::Commit => {
            if let (Some(d), Some(c)) = (movement(code), app.commit.as_mut()) {
                let before = c.cursor.at;
                c.cursor.step(d, c.changes.len());
                if c.cursor.at != before {
                    app.load_patch();
                }
            } else if is_open(code) {
                if let Some(name) = app
                    .commit
                    .as_ref()
                    .and_then(|c| c.changes.get(c.cursor.at))
                    .filter(|n| n.operation != "removed")
                {
                    let key = format!("{}:{}", name.namespace, name.key);
                    app.open_memory(key);
                }
            }
        }
        Screen::Search => {
            if let Some(d) = movement(code) {
                app.search_cursor.step(d, app.hits.len());
            } else if is_open(code) {
                if let Some(h) = app.hits.get(app.search_cursor.at) {
                    let key = format!("{}:{}", h.namespace, h.key);
                    app.open_memory(key);
                }
            }
        }
    }
}

/// Keys while a line is typed: characters, Backspace, Enter to run it, Esc to drop it.
fn prompt_key(app: &mut App<'_>, code: KeyCode) {
    let Some(prompt) = app.prompt.as_mut() else {
        return;
    };
    let text = match prompt {
        Prompt::Revision(t) | Prompt::Search(t) => t,
    };
    match code {
        KeyCode::Char(c) => text.push(c),
        KeyCode::Backspace => {
            text.pop();
        }
        KeyCode::Esc => app.prompt = None,
        KeyCode::Enter => match app.prompt.take() {
            Some(Prompt::Revision(t)) => {
                let t = t.trim().to_string();
                let point = if t.is_empty() {
                    ReadPoint::head()
                } else {
                    ReadPoint::at(t)
                };
                app.switch_to(point);
            }
            Some(Prompt::Search(t)) => {
                app.search_query = t;
                app.run_search();
                app.go(Screen::Search);
            }
            None => {}
        },
        _ => {}
    }
}

/// Keys of the branch picker: move, Enter to read that branch, Esc to close it.
fn picker_key(app: &mut App<'_>, code: KeyCode) {
    let Some((names, cursor)) = app.picker.as_mut() else {
        return;
    };
    if let Some(d) = movement(code) {
        cursor.step(d, names.len());
        return;
    }
    match code {
        KeyCode::Enter => {
            let name = names.get(cursor.at).cloned();
            app.picker = None;
            if let Some(name) = name {
                app.switch_to(ReadPoint::branch(name));
            }
        }
        KeyCode::Esc | KeyCode::Char('q') => app.picker = None,
        _ => {}
    }
}
