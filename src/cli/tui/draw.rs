//! Drawing the interface: a header saying what is read, the screen, a status line and the
//! keys. Stored text is shown through [`esc`], so a memory cannot move the cursor or
//! restyle the terminal.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{Block, Borders, Clear, List, ListItem, ListState, Paragraph, Wrap};
use ratatui::Frame;

use crate::cli::output::esc;

use super::state::{App, Prompt, Screen};

/// Draws the whole interface.
pub fn draw(frame: &mut Frame<'_>, app: &App<'_>) {
    let [header, body, status, keys] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(3),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(frame.area());
    let past = app.point.at.is_some();
    let title = format!(
        " memoir · {} · {} ",
        esc(&app.memoir.path().display().to_string()),
        app.point_label()
    );
    let style = if past {
        Style::new().add_modifier(Modifier::REVERSED | Modifier::BOLD)
    } else {
        Style::new().add_modifier(Modifier::BOLD)
    };
    frame.render_widget(Paragraph::new(Line::styled(title, style)), header);
    match app.screen {
        Screen::Tree => tree(frame, app, body),
        Screen::Memory => memory(frame, app, body),
        Screen::Log => log(frame, app, body),
        Screen::Commit => commit(frame, app, body),
        Screen::Search => search(frame, app, body),
    }
    let line = match &app.prompt {
        Some(Prompt::Revision(t)) => format!("Revision (empty: HEAD): {t}▏"),
        Some(Prompt::Search(t)) => format!("Search: {t}▏"),
        None => app.message.clone().map(|m| esc(&m)).unwrap_or_default(),
    };
    frame.render_widget(Paragraph::new(line), status);
    frame.render_widget(
        Paragraph::new(
            "1 tree  2 log  / search  r revision  b branch  H head  ⏎ open  ⌫ back  ? help  q quit",
        )
        .style(Style::new().add_modifier(Modifier::DIM)),
        keys,
    );
    if let Some((names, cursor)) = &app.picker {
        let area = centred(body, 40, names.len() as u16 + 2);
        let items: Vec<ListItem<'_>> = names.iter().map(|n| ListItem::new(esc(n))).collect();
        frame.render_widget(Clear, area);
        list(
            frame,
            area,
            "Branches (⏎ read, Esc close)",
            items,
            cursor.at,
        );
    }
    if app.help {
        let area = centred(body, 64, HELP.lines().count() as u16 + 2);
        frame.render_widget(Clear, area);
        frame.render_widget(
            Paragraph::new(HELP).block(Block::default().borders(Borders::ALL).title(" Keys ")),
            area,
        );
    }
}

const HELP: &str = "\
↑↓ j k, PgUp PgDn, g G   move
⏎ →                      open (a level, a memory, a commit)
m                        open the memory at a level that has one
⌫ ← h Esc                back (up one level in the tree)
n                        next namespace        [ ]  tree page
1 t  tree   2 l  log   / 3  search
r    read at a revision (HEAD~3, a commit, main@{yesterday})
b    read a branch        H  back to HEAD
q    quit (any key closes this help)";

/// A rectangle of at most `w` x `h` in the middle of `area`.
fn centred(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width);
    let h = h.min(area.height);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

/// A bordered list with the row `at` selected and kept in view.
fn list(frame: &mut Frame<'_>, area: Rect, title: &str, items: Vec<ListItem<'_>>, at: usize) {
    let mut state = ListState::default().with_selected(Some(at));
    let l = List::new(items)
        .block(
            Block::default()
                .borders(Borders::ALL)
                .title(format!(" {title} ")),
        )
        .highlight_style(Style::new().add_modifier(Modifier::REVERSED))
        .highlight_symbol("› ");
    frame.render_stateful_widget(l, area, &mut state);
}

fn tree(frame: &mut Frame<'_>, app: &App<'_>, area: Rect) {
    let Some(level) = &app.tree.level else {
        frame.render_widget(Paragraph::new("Nothing to show here."), area);
        return;
    };
    let width = level
        .children
        .iter()
        .map(|c| c.name.chars().count())
        .max()
        .unwrap_or(0)
        .min(40);
    let items: Vec<ListItem<'_>> = level
        .children
        .iter()
        .map(|c| {
            let mark = if c.has_children { "▸" } else { "•" };
            let mut spans = vec![Span::raw(format!(
                "{mark} {:<width$} {:>8}  ",
                esc(&c.name),
                c.count
            ))];
            if let Some(p) = &c.preview {
                spans.push(Span::styled(
                    esc(p),
                    Style::new().add_modifier(Modifier::DIM),
                ));
            }
            ListItem::new(Line::from(spans))
        })
        .collect();
    let place = if level.prefix.is_empty() {
        format!("{}:", level.namespace)
    } else {
        format!("{}:{}", level.namespace, level.prefix)
    };
    let mut title = format!(
        "Tree {} — {} memor{} at {}",
        esc(&place),
        level.total,
        if level.total == 1 { "y" } else { "ies" },
        level.commit.short(8)
    );
    if level.offset > 0 || level.omitted > 0 {
        title.push_str(&format!(
            " — children {}–{} of {} ([ ])",
            level.offset + 1,
            level.offset + level.children.len(),
            level.offset + level.children.len() + level.omitted
        ));
    }
    list(frame, area, &title, items, app.tree.cursor.at);
}

fn memory(frame: &mut Frame<'_>, app: &App<'_>, area: Rect) {
    let Some(m) = &app.memory else {
        return;
    };
    let mut text: Vec<Line<'_>> = Vec::new();
    let bold = Style::new().add_modifier(Modifier::BOLD);
    match m.item.as_ref().and_then(|i| i.record.as_ref()) {
        None => text.push(Line::from("No memory here at this revision.")),
        Some(rec) => {
            text.push(Line::styled(
                format!("Entries ({})", rec.entries.len()),
                bold,
            ));
            for e in &rec.entries {
                let who = [e.actor.as_deref(), e.source.as_deref()]
                    .into_iter()
                    .flatten()
                    .collect::<Vec<_>>()
                    .join(", ");
                text.push(Line::from(format!(
                    "  [{}] confidence {:.2}{}",
                    e.status.as_str(),
                    e.confidence,
                    if who.is_empty() {
                        String::new()
                    } else {
                        format!(" · {}", esc(&who))
                    }
                )));
                for l in e.content.lines() {
                    text.push(Line::from(format!("    {}", esc(l))));
                }
            }
            let related: Vec<&str> = rec.all_related().map(String::as_str).collect();
            if !related.is_empty() {
                text.push(Line::from(format!(
                    "  related: {}",
                    esc(&related.join(", "))
                )));
            }
        }
    }
    if let Some(b) = &m.blame {
        if let Some(lines) = &b.lines {
            text.push(Line::from(""));
            text.push(Line::styled("Blame (each line's commit)", bold));
            for l in lines {
                text.push(Line::from(format!(
                    "  {} {} {:<20} │ {}",
                    l.commit.short(8),
                    &l.date[..l.date.len().min(10)],
                    esc(l.actor.as_deref().unwrap_or(&l.author)),
                    esc(&l.line)
                )));
            }
        }
        text.push(Line::from(""));
        text.push(Line::styled("History (newest first)", bold));
        for e in &b.entries {
            text.push(Line::from(format!(
                "  {} {} {:<8} {:<20} {}",
                e.short_commit,
                &e.date[..e.date.len().min(10)],
                e.operation,
                esc(e.actor.as_deref().unwrap_or(&e.author)),
                esc(&e.message)
            )));
        }
    }
    let title = format!(" Memory {} ", esc(&m.key));
    frame.render_widget(
        Paragraph::new(Text::from(text))
            .block(Block::default().borders(Borders::ALL).title(title))
            .wrap(Wrap { trim: false })
            .scroll((m.scroll, 0)),
        area,
    );
}

fn log(frame: &mut Frame<'_>, app: &App<'_>, area: Rect) {
    let items: Vec<ListItem<'_>> = app
        .log
        .iter()
        .map(|c| {
            let who = c.metadata.get("actor").unwrap_or(&c.author);
            ListItem::new(format!(
                "{} {} {:<20} {}",
                c.short_hash,
                &c.date[..c.date.len().min(16)],
                esc(who),
                esc(c.subject())
            ))
        })
        .collect();
    let title = format!("Log — {} commits (⏎ shows one)", app.log.len());
    list(frame, area, &title, items, app.log_cursor.at);
}

fn commit(frame: &mut Frame<'_>, app: &App<'_>, area: Rect) {
    let Some(c) = &app.commit else {
        return;
    };
    let [names, patch] =
        Layout::horizontal([Constraint::Percentage(40), Constraint::Percentage(60)]).areas(area);
    let items: Vec<ListItem<'_>> = c
        .changes
        .iter()
        .map(|n| {
            let sign = match n.operation {
                "added" => "+",
                "removed" => "-",
                _ => "~",
            };
            ListItem::new(format!("{sign} {}:{}", esc(&n.namespace), esc(&n.key)))
        })
        .collect();
    let more = if c.more { "+" } else { "" };
    let title = format!(
        "{} {} — {}{} changed",
        c.entry.short_hash,
        esc(c.entry.subject()),
        c.changes.len(),
        more
    );
    list(frame, names, &title, items, c.cursor.at);
    let body = match (&c.patch, c.entry.parents.is_empty()) {
        (_, true) => "The first commit: nothing before it.".to_string(),
        (Some(p), _) => esc(p),
        (None, _) => String::new(),
    };
    frame.render_widget(
        Paragraph::new(body)
            .block(Block::default().borders(Borders::ALL).title(" Patch "))
            .wrap(Wrap { trim: false }),
        patch,
    );
}

fn search(frame: &mut Frame<'_>, app: &App<'_>, area: Rect) {
    let items: Vec<ListItem<'_>> = app
        .hits
        .iter()
        .map(|h| {
            let content: String = h.content.split_whitespace().collect::<Vec<_>>().join(" ");
            ListItem::new(Line::from(vec![
                Span::raw(format!(
                    "{:>6.2}  {}:{}  ",
                    h.score,
                    esc(&h.namespace),
                    esc(&h.key)
                )),
                Span::styled(esc(&content), Style::new().add_modifier(Modifier::DIM)),
            ]))
        })
        .collect();
    let title = format!(
        "Search “{}” — {} hit{} (⏎ opens one, / searches again)",
        esc(&app.search_query),
        app.hits.len(),
        if app.hits.len() == 1 { "" } else { "s" }
    );
    list(frame, area, &title, items, app.search_cursor.at);
}
