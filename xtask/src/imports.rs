//! No import circles: in every crate of the workspace, the files' `crate::` paths form a graph
//! without a cycle, so each file can be read knowing only those below it (issue 28.6).
//!
//! The crates are the workspace's members; a room is a file (`a/b.rs` is `a::b`). An edge
//! `a -> b` is a path in `a`'s code that names an item of file `b`: `crate::…`, `super::…`,
//! `self::…`, a path through a file module `a` declares (`check::run`), in code and in `use`
//! trees (nested and over several lines). A path goes to the longest leading part of it that is
//! a file, else to the crate's root; a name that file re-exports (`pub use`, as `lib.rs` and
//! `backend.rs` do) goes on to the file that defines it: the re-exporting file is a face, and
//! naming an item through it ties a file to the item's home alone. A child naming its parent's
//! item and a parent naming its child's are edges like any other. Comments, doc comments and
//! `#[cfg(test)]` modules are left out: a doc link is a reader's way to where a type is used,
//! which points up by nature (a low type's page naming `Sandbox::run`, which returns it), and
//! is never compiled; test code is not built into the room, and a test may reach up to build
//! what it checks. A circle is printed with each tie and what it names.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Graph = BTreeMap<String, BTreeSet<String>>;

fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

fn module_of(root: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(root).unwrap_or(file).with_extension("");
    let mut parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    match parts.as_slice() {
        [only] if only == "lib" || only == "main" => "crate".to_owned(),
        _ => parts.join("::"),
    }
}

/// The code of a file as the import picture reads it: plain `//` comment lines dropped, the
/// text of doc comments kept (a rustdoc link path is an edge too), and everything from the
/// first `#[cfg(test)]` (or `#[cfg(all(test, …))]`) module on left out: test code is not
/// compiled into the file's room, and a test may reach up to build what it checks.
fn code_of(text: &str) -> String {
    let mut code = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        let test_only =
            trimmed.starts_with("#[cfg(test)]") || trimmed.starts_with("#[cfg(all(test,");
        if test_only {
            match lines.peek().map(|next| next.trim_start()) {
                // A test module of its own file (`mod tests;`): that line alone is left out.
                Some(next) if is_mod_line(next) && next.trim_end().ends_with(';') => {
                    lines.next();
                    continue;
                }
                // An inline test module, last in the file by the project's custom.
                Some(next) if is_mod_line(next) => break,
                _ => {}
            }
        }
        if !trimmed.starts_with("//") {
            code.push_str(line);
        }
        code.push('\n');
    }
    code
}

fn is_mod_line(line: &str) -> bool {
    let line = line
        .strip_prefix("pub(crate) ")
        .or_else(|| line.strip_prefix("pub(super) "))
        .or_else(|| line.strip_prefix("pub "))
        .unwrap_or(line);
    line.starts_with("mod ")
}

/// The names of the file modules `code` declares (`mod a;`).
fn children_of(code: &str) -> Vec<String> {
    code.lines()
        .map(str::trim_start)
        .filter(|l| is_mod_line(l) && l.trim_end().ends_with(';'))
        .filter_map(|l| {
            let name: String = l.trim_end_matches(';').rsplit(' ').next()?.to_owned();
            (!name.is_empty()).then_some(name)
        })
        .collect()
}

fn ident(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// Reads a path or a use tree at the start of `s` below `prefix`, pushing each full path it
/// names (a braced list, nested or over several lines, gives each of its items; `self` in a
/// list names the list's module, `*` the module itself). Returns how much of `s` it read.
fn tree(s: &str, prefix: &[String], out: &mut Vec<Vec<String>>) -> usize {
    let skip = |at: usize| at + (s.len() - at - s[at..].trim_start().len());
    let mut at = skip(0);
    if s[at..].starts_with('{') {
        at += 1;
        loop {
            at = skip(at);
            if at >= s.len() {
                return at;
            }
            if s[at..].starts_with('}') {
                return at + 1;
            }
            let read = tree(&s[at..], prefix, out);
            at = skip(at + read);
            if s[at..].starts_with(',') {
                at += 1;
            } else if !s[at..].starts_with('}') {
                // Not a use list after all (`{` of a block): stop here.
                return at;
            }
        }
    }
    if s[at..].starts_with('*') {
        out.push(prefix.to_vec());
        return at + 1;
    }
    let name = ident(&s[at..]);
    if name.is_empty() {
        if !prefix.is_empty() {
            out.push(prefix.to_vec());
        }
        return at;
    }
    let mut path = prefix.to_vec();
    if name != "self" {
        path.push(name.to_owned());
    }
    at += name.len();
    match s[at..].strip_prefix("::") {
        Some(_) => at + 2 + tree(&s[at + 2..], &path, out),
        None => {
            out.push(path);
            at
        }
    }
}

/// The byte ranges of the inline module blocks (`mod a { … }`) in `code`: a `super::` inside
/// one first leaves that module, which is still the same file. Braces in string and character
/// literals are skipped.
fn inline_modules(code: &str) -> Vec<(usize, usize)> {
    let bytes = code.as_bytes();
    let mut found = Vec::new();
    for (at, _) in code.match_indices("mod ") {
        if at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_') {
            continue;
        }
        let rest = &code[at + 4..];
        let name = ident(rest.trim_start());
        if name.is_empty() {
            continue;
        }
        let after = rest.trim_start()[name.len()..].trim_start();
        if !after.starts_with('{') {
            continue;
        }
        let open = code.len() - after.len();
        let mut depth = 0usize;
        let mut i = open;
        while i < bytes.len() {
            match bytes[i] {
                b'"' => {
                    i += 1;
                    while i < bytes.len() && bytes[i] != b'"' {
                        i += if bytes[i] == b'\\' { 2 } else { 1 };
                    }
                }
                b'\'' if bytes.get(i + 2) == Some(&b'\'') => i += 2,
                b'\'' if bytes.get(i + 1) == Some(&b'\\') => i += 3,
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
            i += 1;
        }
        found.push((open, i));
    }
    found
}

/// The paths `text` names, each as its names from the crate's root: `crate::a::b`; `super::b`
/// (or `super::super::b`) and `self::b` of a file whose module is `module`, resolved against
/// it; and `c::d` where `c` is a file module the file declares (`mod c;`). Use trees give each
/// of their items. Plain comments and test modules are left out; doc comments are read.
fn paths_in(text: &str, module: &str) -> Vec<Vec<String>> {
    let code = code_of(text);
    let own: Vec<String> = if module == "crate" {
        Vec::new()
    } else {
        module.split("::").map(str::to_owned).collect()
    };
    let children = children_of(&code);
    let inline = inline_modules(&code);
    let mut paths = Vec::new();
    let bytes = code.as_bytes();
    let mut at = 0;
    while at < code.len() {
        let before = at.checked_sub(1).map(|b| bytes[b] as char);
        let starts_word =
            !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':');
        // `$crate::` in a macro is the crate too.
        let starts_word = starts_word || (before == Some('$') && code[at..].starts_with("crate::"));
        if !starts_word || !code.is_char_boundary(at) {
            at += 1;
            continue;
        }
        let word = ident(&code[at..]);
        if word.is_empty() || !code[at + word.len()..].starts_with("::") {
            at += word.len().max(1);
            continue;
        }
        let rest = &code[at..];
        let read = if word == "crate" {
            "crate::".len() + tree(&rest["crate::".len()..], &[], &mut paths)
        } else if word == "self" {
            "self::".len() + tree(&rest["self::".len()..], &own, &mut paths)
        } else if word == "super" {
            let mut base = own.clone();
            let mut rest = rest;
            let mut read = 0;
            // Leaving an inline module stays in the file.
            let mut inside = inline
                .iter()
                .filter(|(from, to)| (*from..*to).contains(&at))
                .count();
            while let Some(next) = rest.strip_prefix("super::") {
                match inside.checked_sub(1) {
                    Some(fewer) => inside = fewer,
                    None => {
                        base.pop();
                    }
                }
                rest = next;
                read += "super::".len();
            }
            read + tree(rest, &base, &mut paths)
        } else if children.iter().any(|c| c == word) {
            tree(rest, &own, &mut paths)
        } else {
            word.len()
        };
        at += read.max(1);
    }
    paths
}

/// What each edge of a graph names: (from, to) to the names `from` takes from `to`.
type Ties = BTreeMap<(String, String), BTreeSet<String>>;

fn graph_of(root: &Path) -> (Graph, Ties) {
    let mut files = Vec::new();
    rust_files(root, &mut files);
    let texts: BTreeMap<String, String> = files
        .iter()
        .map(|f| {
            (
                module_of(root, f),
                std::fs::read_to_string(f).unwrap_or_default(),
            )
        })
        .collect();
    let exports: BTreeMap<&str, BTreeMap<String, Vec<String>>> = texts
        .iter()
        .map(|(module, text)| (module.as_str(), reexports(text, module)))
        .collect();
    // The longest leading part of a path that is a file; the crate's root when none is.
    let file_of = |names: &[String]| {
        (0..=names.len())
            .rev()
            .map(|n| match n {
                0 => "crate".to_owned(),
                n => names[..n].join("::"),
            })
            .find(|m| texts.contains_key(m))
    };
    let mut graph = Graph::new();
    let mut ties = Ties::new();
    for (module, text) in &texts {
        let edges = graph.entry(module.clone()).or_default();
        for mut names in paths_in(text, module) {
            let Some(mut target) = file_of(&names) else {
                continue;
            };
            // A name taken through another file's `pub use` ties to the file that defines it:
            // the re-exporting file is a face, not a room one must read first.
            for _ in 0..8 {
                let depth = module_depth(&target);
                let Some(home) = names
                    .get(depth)
                    .and_then(|name| exports.get(target.as_str())?.get(name))
                    .filter(|_| target != *module)
                else {
                    break;
                };
                let mut resolved = home.clone();
                resolved.extend_from_slice(&names[depth + 1..]);
                match file_of(&resolved) {
                    Some(next) if next != target => {
                        names = resolved;
                        target = next;
                    }
                    _ => break,
                }
            }
            if *module == target {
                continue;
            }
            let depth = module_depth(&target);
            let named = names
                .get(depth)
                .or(names.last())
                .cloned()
                .unwrap_or_else(|| "*".to_owned());
            edges.insert(target.clone());
            ties.entry((module.clone(), target))
                .or_default()
                .insert(named);
        }
    }
    (graph, ties)
}

/// How many names a module's path has below the crate's root.
fn module_depth(module: &str) -> usize {
    if module == "crate" {
        0
    } else {
        module.split("::").count()
    }
}

/// The names `text` (the file of `module`) re-exports with `pub use`, each with the full path
/// it names. A renamed one (`as`) is left out: it is rare, and its path is still read as a tie.
fn reexports(text: &str, module: &str) -> BTreeMap<String, Vec<String>> {
    let code = code_of(text);
    // Its `mod` lines, so that a `pub use child::Item` resolves as in the file.
    let mods: String = code
        .lines()
        .filter(|l| is_mod_line(l.trim_start()))
        .map(|l| format!("{l}\n"))
        .collect();
    let mut found = BTreeMap::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("pub use ") {
        let after = &rest[at + "pub use ".len()..];
        let end = after.find(';').unwrap_or(after.len());
        let statement = &after[..end];
        if !statement.contains(" as ") {
            for path in paths_in(&format!("{mods}{statement};"), module) {
                // The first wins: a second re-export of a name is another target's (`cfg`),
                // as `lib.rs`'s stub `Sandbox` for systems without a launch is.
                if let Some(name) = path.last() {
                    found.entry(name.clone()).or_insert(path);
                }
            }
        }
        rest = &after[end..];
    }
    found
}

/// A circle as the test prints it: its files, then each tie between two of them with the names.
fn describe(circle: &[String], ties: &Ties) -> String {
    let mut text = format!("{circle:?}");
    for ((from, to), names) in ties {
        if circle.contains(from) && circle.contains(to) {
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            text.push_str(&format!("\n    {from} -> {to}: {}", names.join(", ")));
        }
    }
    text
}

/// The strongly connected parts of `graph` with more than one module (Tarjan's algorithm).
fn circles(graph: &Graph) -> Vec<Vec<String>> {
    struct Walk<'g> {
        graph: &'g Graph,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        found: Vec<Vec<String>>,
    }
    fn visit<'g>(walk: &mut Walk<'g>, node: &'g str) {
        let at = walk.index.len();
        walk.index.insert(node, at);
        walk.low.insert(node, at);
        walk.stack.push(node);
        for next in walk.graph.get(node).into_iter().flatten() {
            let next = next.as_str();
            if !walk.index.contains_key(next) {
                visit(walk, next);
                let low = walk.low[next].min(walk.low[node]);
                walk.low.insert(node, low);
            } else if walk.stack.contains(&next) {
                let low = walk.index[next].min(walk.low[node]);
                walk.low.insert(node, low);
            }
        }
        if walk.low[node] == walk.index[node] {
            let mut part = Vec::new();
            while let Some(top) = walk.stack.pop() {
                part.push(top.to_owned());
                if top == node {
                    break;
                }
            }
            if part.len() > 1 {
                part.sort();
                walk.found.push(part);
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for node in graph.keys() {
        if !walk.index.contains_key(node.as_str()) {
            visit(&mut walk, node);
        }
    }
    walk.found
}

#[test]
fn no_crate_of_the_workspace_has_an_import_circle() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let manifest = std::fs::read_to_string(workspace.join("Cargo.toml")).expect("Cargo.toml");
    let members = manifest
        .split("members = [")
        .nth(1)
        .and_then(|rest| rest.split(']').next())
        .expect("the workspace's members");
    let crates: Vec<String> = members
        .split(',')
        .map(|m| m.trim().trim_matches('"').to_owned())
        .filter(|m| !m.is_empty())
        .map(|m| format!("{m}/src"))
        .collect();
    assert!(crates.iter().any(|c| c == "sandbox-core/src"), "{crates:?}");
    let mut found = Vec::new();
    let mut shown = Vec::new();
    for krate in &crates {
        let root = workspace.join(krate);
        let (graph, ties) = graph_of(&root);
        assert!(!graph.is_empty(), "{krate}: no modules found");
        for circle in circles(&graph) {
            found.push(format!("{krate}: {circle:?}"));
            shown.push(format!("{krate}: {}", describe(&circle, &ties)));
        }
    }
    for circle in &shown {
        eprintln!("import circle in {circle}");
    }
    assert!(
        found.is_empty(),
        "{} import circles (ties above)",
        found.len()
    );
}

#[test]
fn a_name_through_a_reexport_ties_to_its_home_and_a_doc_link_ties_nothing() {
    let root = std::env::temp_dir().join(format!("xtask-imports-{}", std::process::id()));
    std::fs::create_dir_all(&root).unwrap();
    for (file, text) in [
        (
            "lib.rs",
            "#[cfg(test)]\nmod tests;\npub use low::Item;\nmod high;\nmod low;\n",
        ),
        (
            "low.rs",
            "/// Used by [`Use`](crate::high::Use).\npub struct Item;\n",
        ),
        ("high.rs", "use crate::Item;\npub struct Use(Item);\n"),
    ] {
        std::fs::write(root.join(file), text).unwrap();
    }
    let (graph, _) = graph_of(&root);
    std::fs::remove_dir_all(&root).unwrap();
    let edges = |m: &str| graph[m].iter().cloned().collect::<Vec<String>>();
    assert_eq!(edges("high"), vec!["low"]);
    assert_eq!(edges("low"), Vec::<String>::new());
    assert_eq!(edges("crate"), vec!["low"]);
}

#[test]
fn a_circle_is_found() {
    let mut graph = Graph::new();
    for (from, to) in [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")] {
        graph.entry(from.into()).or_default().insert(to.into());
        graph.entry(to.into()).or_default();
    }
    assert_eq!(circles(&graph), vec![vec!["a", "b", "c"]]);
    let text = concat!(
        "//! See [`Tracer`](crate::explain::Tracer).\n",
        "use crate::x::y;\n// crate::z\nmod kid;\n",
        "fn f() { crate::w(); kid::g(); }\nuse super::{p, q::{r, s}};\nuse super::super::s;\n",
        "use crate::{\n    m::{self, n},\n    o,\n};\n",
        "mod inner {\n    let c = '{';\n    use super::*;\n    use super::super::u;\n}\n",
        "#[cfg(test)]\nmod test_helpers;\nuse crate::v;\n",
        "#[cfg(test)]\nmod tests { crate::t; }",
    );
    let names = |p: &[&str]| p.iter().map(|n| n.to_string()).collect::<Vec<_>>();
    assert_eq!(
        paths_in(text, "a::b::c"),
        vec![
            names(&["x", "y"]),
            names(&["w"]),
            names(&["a", "b", "c", "kid", "g"]),
            names(&["a", "b", "p"]),
            names(&["a", "b", "q", "r"]),
            names(&["a", "b", "q", "s"]),
            names(&["a", "s"]),
            names(&["m"]),
            names(&["m", "n"]),
            names(&["o"]),
            names(&["a", "b", "c"]),
            names(&["a", "b", "u"]),
            names(&["v"]),
        ]
    );
    // `crate::Item` re-exported by the root from `low`: named through the root, it ties the
    // file to `low`, where it is defined, and `low` to nothing.
    assert_eq!(
        reexports("pub use low::Item;\nmod low;\n", "crate").get("Item"),
        Some(&names(&["low", "Item"]))
    );
}
