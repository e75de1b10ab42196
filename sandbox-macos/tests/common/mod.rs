//! A small reader for the profile language, for tests: it checks that a profile is one well-formed
//! S-expression per top-level form, and that those forms grant only what this backend intends.

// Each test crate that includes this module uses a different part of it.
#![allow(dead_code)]

use std::fmt;

/// One expression of the profile language, as far as this backend's profiles use it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expr {
    /// `( ... )`.
    List(Vec<Expr>),
    /// A symbol or number, such as `allow` or `1`.
    Atom(String),
    /// A string literal, with its escapes decoded.
    Str(String),
}

impl Expr {
    fn atom(&self) -> Option<&str> {
        match self {
            Expr::Atom(a) => Some(a),
            _ => None,
        }
    }

    /// Whether this is the list `(head first-atom)`, such as `(deny default)`.
    fn is_pair(&self, head: &str, arg: &str) -> bool {
        matches!(self, Expr::List(items) if items.len() == 2
            && items[0].atom() == Some(head)
            && items[1].atom() == Some(arg))
    }

    /// Every expression in this one, itself included.
    fn walk(&self) -> Vec<&Expr> {
        let mut all = vec![self];
        if let Expr::List(items) = self {
            for item in items {
                all.extend(item.walk());
            }
        }
        all
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Atom(a) => f.write_str(a),
            Expr::Str(s) => write!(f, "{s:?}"),
            Expr::List(items) => {
                f.write_str("(")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(" ")?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_str(")")
            }
        }
    }
}

/// Reads `text` as a sequence of top-level forms. Fails on an unbalanced parenthesis, an
/// unterminated string, an escape the profile language does not define, or a regular expression
/// literal (this backend writes none).
pub fn parse(text: &str) -> Result<Vec<Expr>, String> {
    let mut stack: Vec<Vec<Expr>> = vec![Vec::new()];
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {}
            ';' => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            '(' => stack.push(Vec::new()),
            ')' => {
                let list = stack.pop().filter(|_| !stack.is_empty());
                let Some(list) = list else {
                    return Err("a `)` closes nothing".into());
                };
                stack
                    .last_mut()
                    .expect("the top level is never popped")
                    .push(Expr::List(list));
            }
            '"' => {
                let mut value = String::new();
                loop {
                    match chars.next() {
                        None => return Err("a string is not terminated".into()),
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some('\\') => value.push('\\'),
                            Some('"') => value.push('"'),
                            Some('n') => value.push('\n'),
                            Some('t') => value.push('\t'),
                            Some('r') => value.push('\r'),
                            other => return Err(format!("unknown escape \\{other:?} in a string")),
                        },
                        Some(c) => value.push(c),
                    }
                }
                stack
                    .last_mut()
                    .expect("the stack always has the top level")
                    .push(Expr::Str(value));
            }
            c => {
                let mut atom = String::from(c);
                while let Some(&next) = chars.peek() {
                    if next.is_whitespace() || matches!(next, '(' | ')' | '"' | ';') {
                        break;
                    }
                    atom.push(next);
                    chars.next();
                }
                if atom == "#" && chars.peek() == Some(&'"') {
                    return Err("a regular expression literal".into());
                }
                stack
                    .last_mut()
                    .expect("the stack always has the top level")
                    .push(Expr::Atom(atom));
            }
        }
    }
    match <[Vec<Expr>; 1]>::try_from(stack) {
        Ok([forms]) => Ok(forms),
        Err(open) => Err(format!("{} list(s) are not closed", open.len() - 1)),
    }
}

/// The operations a profile of this backend may allow, and whether the rule must name paths.
const OPERATIONS: &[(&str, bool)] = &[
    ("process-exec", true),
    ("file-read*", true),
    ("file-read-metadata", false),
    ("sysctl-read", false),
    ("file-write-data", true),
];

/// Parses `text` and checks its shape: `(version 1)` first, then exactly one `(deny default)`,
/// the system profile imported once, and otherwise only `allow` rules for the operations above.
/// A rule that must name paths names at least one, each a `(subpath (param "POLICY_..."))`, and
/// the only file written is `/dev/null`. Nothing anywhere says `(allow default)`, and nothing
/// names a `mach`, `network` or `process-fork` operation. Returns the parameter names used.
pub fn audit(text: &str) -> Result<Vec<String>, String> {
    let forms = parse(text)?;
    let everything: Vec<&Expr> = forms.iter().flat_map(Expr::walk).collect();
    if everything.iter().any(|e| e.is_pair("allow", "default")) {
        return Err("the profile says (allow default)".into());
    }
    for expr in &everything {
        if let Some(atom) = expr.atom() {
            if ["mach", "network", "process-fork"]
                .iter()
                .any(|bad| atom.starts_with(bad))
            {
                return Err(format!("the profile names {atom}"));
            }
        }
    }
    if forms.first().is_none_or(|f| !f.is_pair("version", "1")) {
        return Err("the first form is not (version 1)".into());
    }
    let denies = forms
        .iter()
        .filter(|f| f.is_pair("deny", "default"))
        .count();
    if denies != 1 || !forms[1].is_pair("deny", "default") {
        return Err(format!(
            "(deny default) must be the second form and the only one; found {denies}"
        ));
    }
    let import = Expr::List(vec![
        Expr::Atom("import".into()),
        Expr::Str("system.sb".into()),
    ]);
    if forms.iter().filter(|f| **f == import).count() != 1 {
        return Err("the system profile is not imported exactly once".into());
    }

    let mut params = Vec::new();
    for form in &forms[2..] {
        if *form == import {
            continue;
        }
        let Expr::List(items) = form else {
            return Err(format!("a top-level {form} that is not a rule"));
        };
        if items.first().and_then(Expr::atom) != Some("allow") {
            return Err(format!(
                "a top-level form that is not an allow rule: {form}"
            ));
        }
        let operations: Vec<&str> = items[1..].iter().map_while(Expr::atom).collect();
        let filters = &items[1 + operations.len()..];
        if operations.is_empty() {
            return Err(format!("a rule with no operation: {form}"));
        }
        for operation in &operations {
            let Some(&(_, needs_paths)) = OPERATIONS.iter().find(|(name, _)| name == operation)
            else {
                return Err(format!("a rule allows {operation}: {form}"));
            };
            if needs_paths && filters.is_empty() {
                return Err(format!("{operation} is allowed everywhere: {form}"));
            }
        }
        if operations.contains(&"file-write-data") {
            let dev_null = Expr::List(vec![
                Expr::Atom("literal".into()),
                Expr::Str("/dev/null".into()),
            ]);
            if operations.len() != 1 || filters != [dev_null] {
                return Err(format!("a write rule for more than /dev/null: {form}"));
            }
            continue;
        }
        for filter in filters {
            params.push(param_of(filter).ok_or_else(|| format!("a filter {filter} in {form}"))?);
        }
    }
    Ok(params)
}

/// The name in `(subpath (param "NAME"))`, if `filter` is that and the name is one of this
/// backend's.
fn param_of(filter: &Expr) -> Option<String> {
    let Expr::List(items) = filter else {
        return None;
    };
    let [Expr::Atom(subpath), Expr::List(param)] = items.as_slice() else {
        return None;
    };
    let [Expr::Atom(keyword), Expr::Str(name)] = param.as_slice() else {
        return None;
    };
    let ours = name.starts_with("POLICY_EXEC_") || name.starts_with("POLICY_READ_");
    (subpath == "subpath" && keyword == "param" && ours).then(|| name.clone())
}
