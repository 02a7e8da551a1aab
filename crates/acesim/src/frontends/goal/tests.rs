use super::*;
use crate::program::ops::OpKind;

#[test]
fn reads_labels_dependencies_and_operations() {
    let p = parse("t.goal", "num_ranks 2\nrank 0 {\nl1: calc 100\nl2: send 8b to 1 tag 3\nl2 requires l1\n}\nrank 1 {\nl1: recv 8b from 0 tag 3 cpu 0\n}\n").unwrap();
    assert_eq!(p.ops[0][0].kind, OpKind::Compute { ps: 100_000 });
    assert_eq!(
        p.ops[0][1].kind,
        OpKind::Send {
            dst: 1,
            size: 8,
            tag: 3,
            comm: 0
        }
    );
    let d = &p.deps.as_ref().unwrap()[0];
    assert_eq!(d.requires, vec![0, 1]);
    assert_eq!(d.after_complete.of(0), &[1]);
    assert_eq!(
        p.ops[1][0].kind,
        OpKind::Recv {
            src: 0,
            size: 8,
            tag: 3,
            comm: 0
        }
    );
}

fn e(text: &str) -> String {
    parse("bad.goal", text).unwrap_err().to_string()
}

#[test]
fn bad_goal_input_is_located() {
    assert!(e("rank 0 {\n}\n").contains("starts with `num_ranks N`"));
    assert_eq!(
        e("num_ranks 2\nrank 0 {\nl1: send 8b to 5 tag 0\n}\n"),
        "bad.goal:3:16: field `dst`: rank 5 is out of range: num_ranks is 2"
    );
    assert!(e("num_ranks 2\nrank 0 {\nl1: calc 1\nl1 requires l9\n}\n")
        .starts_with("bad.goal:4:13: field `label`: rank 0: label l9 is not defined"));
    assert!(e(
        "num_ranks 2\nrank 0 {\nl1: calc 1\nl2: calc 1\nl1 requires l2\nl2 irequires l1\n}\n"
    )
    .contains("cycle"));
    assert!(e("num_ranks 2\nrank 0 {\nl1: jump 1\n}\n").contains("unknown GOAL operation `jump`"));
    assert!(e("num_ranks 2\nrank 0 {\nl1: calc 1\n").contains("not closed"));
    assert!(e("num_ranks 2\nrank 0 {\nl1: send -8b to 1 tag 0\n}\n").contains("negative"));
    assert!(e("num_ranks 2\nrank 0 {\nl1: calc 1 gpu 2\n}\n").contains("unexpected `gpu`"));
    assert!(e("num_ranks 2\nrank 0 {\nl1: send 1b to 1 tag -2\n}\n")
        .starts_with("bad.goal:3:22: field `tag`: tag -2 is out of range"));
    assert!(e("num_ranks 2\nrank 0 {\nl1: calc 99999999999999999\n}\n").contains("longer than"));
}

/// An operation's dependents are listed in operation order (the order a completion makes
/// them ready in), whatever the order of their `requires` lines.
#[test]
fn dependents_are_in_operation_order_whatever_the_line_order() {
    let text = "num_ranks 1\nrank 0 {\na: calc 100\nb: calc 50\nc: calc 70\nd: calc 1\ne: calc 10 cpu 1\nf: calc 20 cpu 1\nf requires a\nd requires b\ne requires a\nc requires a\nd irequires a\nf requires b\n}\n";
    let p = parse("t.goal", text).unwrap();
    let d = &p.deps.as_ref().unwrap()[0];
    assert_eq!(d.after_complete.of(0), &[2, 4, 5]);
    assert_eq!(d.after_complete.of(1), &[3, 5]);
    assert_eq!(d.after_start.of(0), &[3]);
    assert_eq!(d.requires, vec![0, 0, 1, 1, 1, 2]);
    assert_eq!(d.irequires, vec![0, 0, 0, 1, 0, 0]);
    assert_eq!(&d.labels[5], "f");
}

/// Any space separates words, a vertical tab or a form feed too, on lines short (split from
/// masks) and long alike; the columns of errors count them as `word_col` does.
#[test]
fn every_space_separates_words_on_short_and_long_lines() {
    let spaced = "num_ranks 2\nrank 0 {\nl1: calc 100\nl2: send 8b to 1 tag 3\nl2 requires l1\n}\nrank 1 {\nl1: recv 8b from 0 tag 3 cpu 0\n}\n";
    let long_pad = " ".repeat(70);
    for sep in ["\x0b", "\x0c", "\t", "\u{a0}"] {
        for pad in ["", long_pad.as_str()] {
            let text = spaced.replace(' ', sep).replace('\n', &format!("{pad}\n"));
            let p = parse("t.goal", &text).expect("reads");
            let q = parse("t.goal", spaced).expect("reads");
            assert_eq!(
                p.ops,
                q.ops,
                "separator {sep:?}, line padded by {}",
                pad.len()
            );
        }
    }
    // An error's column past a vertical tab, on a short line and on a long one.
    for pad in ["", long_pad.as_str()] {
        let text = format!("num_ranks 2\nrank 0 {{\nl1: send\x0b8b to 5 tag 0{pad}\n}}\n");
        assert!(
            e(&text).starts_with("bad.goal:3:16: field `dst`"),
            "{}",
            e(&text)
        );
    }
}
