//! Plain-text helpers shared by the `history` and `compare` formats: columns two spaces
//! apart, counted nouns, cut strings.

pub(crate) use crate::units::count;

/// Lays out rows as columns two spaces apart, left-aligned except the columns listed in
/// `right` (numbers); trailing spaces are trimmed.
pub(crate) fn table(rows: &[Vec<String>], right: &[usize]) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|i| {
            rows.iter()
                .filter_map(|r| r.get(i))
                .map(|c| c.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (i, (cell, width)) in row.iter().zip(&widths).enumerate() {
            let pad = width - cell.chars().count();
            if right.contains(&i) {
                line.extend(std::iter::repeat_n(' ', pad));
                line.push_str(cell);
                line.push_str("  ");
            } else {
                line.push_str(cell);
                line.extend(std::iter::repeat_n(' ', pad + 2));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// `s` cut to at most `max` characters, with an ellipsis where it was cut.
pub(crate) fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(3)).collect();
    out.push_str("...");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_align_and_lines_end_clean() {
        let rows = vec![
            vec!["a".to_string(), "bb".to_string(), String::new()],
            vec!["ccc".to_string(), "d".to_string(), "e".to_string()],
        ];
        assert_eq!(table(&rows, &[]), "a    bb\nccc  d   e\n");
        assert_eq!(table(&rows, &[1]), "a    bb\nccc   d  e\n");
        assert_eq!(count(1, "run"), "1 run");
        assert_eq!(count(0, "run"), "0 runs");
        assert_eq!(truncate("abcdef", 5), "ab...");
        assert_eq!(truncate("abc", 5), "abc");
    }
}
