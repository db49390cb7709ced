//! Plain-text helpers shared by the `history` and `compare` formats: columns two spaces
//! apart, counted nouns, cut strings.

pub(crate) use crate::units::count;

/// Lays out rows as columns two spaces apart, left-aligned except the columns listed in
/// `right` (numbers); trailing spaces are trimmed.
pub(crate) fn table(rows: &[Vec<String>], right: &[usize]) -> String {
    let widths = column_widths(rows);
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

/// [`table`] within `width` characters: while its lines are longer, the steps of `give` are
/// taken in order, each `(column, floor)` cutting that column's cells (with an ellipsis) to
/// no fewer than `floor` characters, or, with a floor of 0, leaving the column out.
pub(crate) fn table_within(
    rows: &[Vec<String>],
    right: &[usize],
    width: usize,
    give: &[(usize, usize)],
) -> String {
    let mut widths = column_widths(rows);
    let cols = widths.len();
    let mut kept = vec![true; cols];
    let total = |w: &[usize], kept: &[bool]| {
        let n = kept.iter().filter(|&&k| k).count();
        w.iter()
            .zip(kept)
            .filter(|(_, &k)| k)
            .map(|(w, _)| w)
            .sum::<usize>()
            + 2 * n.saturating_sub(1)
    };
    for &(col, floor) in give {
        let over = total(&widths, &kept).saturating_sub(width);
        if over == 0 {
            break;
        }
        if col >= cols || !kept[col] {
            continue;
        }
        if floor == 0 {
            kept[col] = false;
        } else if widths[col] > floor {
            widths[col] -= over.min(widths[col] - floor);
        }
    }
    let cut: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            r.iter()
                .enumerate()
                .filter(|(i, _)| kept[*i])
                .map(|(i, c)| truncate(c, widths[i]))
                .collect()
        })
        .collect();
    let right: Vec<usize> = right
        .iter()
        .filter(|&&c| c < cols && kept[c])
        .map(|&c| kept[..c].iter().filter(|&&k| k).count())
        .collect();
    table(&cut, &right)
}

/// The widest cell of each column, in characters.
fn column_widths(rows: &[Vec<String>]) -> Vec<usize> {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    (0..cols)
        .map(|i| {
            rows.iter()
                .filter_map(|r| r.get(i))
                .map(|c| c.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect()
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

    #[test]
    fn a_table_gives_way_column_by_column_until_it_fits() {
        let rows = vec![
            vec![
                "id".to_string(),
                "when".to_string(),
                "n".to_string(),
                "command".to_string(),
            ],
            vec![
                "r1".to_string(),
                "2026-11-26".to_string(),
                "12".to_string(),
                "zmqperf run --patterns reqrep --transports tcp".to_string(),
            ],
        ];
        let give = [(3, 12), (1, 0), (3, 6)];
        // Wide enough: as it is.
        assert_eq!(table_within(&rows, &[2], 200, &give), table(&rows, &[2]));
        // The command is cut first.
        let t = table_within(&rows, &[2], 34, &give);
        assert!(t.lines().all(|l| l.chars().count() <= 34), "{t}");
        assert!(t.contains("2026-11-26") && t.contains("..."), "{t}");
        // Then the date goes, and the command is cut further; numbers stay right-aligned.
        let t = table_within(&rows, &[2], 20, &give);
        assert!(t.lines().all(|l| l.chars().count() <= 20), "{t}");
        assert!(
            !t.contains("2026") && t.contains("id  ") && t.contains("12"),
            "{t}"
        );
        assert!(t.lines().nth(1).unwrap().starts_with("r1  12"), "{t}");
    }
}
