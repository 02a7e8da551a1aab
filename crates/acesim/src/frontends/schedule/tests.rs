use super::*;
use crate::program::ops::OpKind;

#[test]
fn parses_the_documented_example() {
    let text = "# acesim schedule 1\nranks 2\nrank 0\ncompute 100us @fig1.c:9\nput 1 4 tag=0 handle=1 @fig1.c:10\ncomplete 1 @fig1.c:11\nrank 1\npoll 0 @fig1.c:13\n";
    let p = parse("s.sched", text).unwrap();
    assert_eq!(p.ranks, 2);
    assert_eq!(p.ops[0].len(), 3);
    assert_eq!(p.ops[0][0].kind, OpKind::Compute { ps: 100_000_000 });
    assert_eq!(p.describe_loc(p.ops[0][1].loc), "fig1.c:10");
    assert_eq!(p.ops[1][0].kind, OpKind::Poll { tag: 0 });
    // Round trip through the writer.
    let again = parse("w", &write(&p).unwrap()).unwrap();
    assert_eq!(again.ops, p.ops);
}

fn err(text: &str) -> String {
    parse("bad.sched", text).unwrap_err().to_string()
}

#[test]
fn bad_input_names_line_column_and_field() {
    assert_eq!(
        err("ranks 2\nrank 0\nput 5 4\n"),
        "bad.sched:3:5: field `dst`: rank 5 is out of range: there are 2 ranks (0..1)"
    );
    assert!(err("ranks 2\nrank 0\nput 1 -4\n")
        .starts_with("bad.sched:3:7: field `size`: size -4 is negative"));
    assert!(err("ranks 2\nrank 0\ncompute 10\n").contains("bad.sched:3:9: field `time`"));
    assert!(err("ranks 2\nrank 0\njump 1\n").starts_with("bad.sched:3:1: unknown operation `jump`"));
    // The likely intended word first, among operations and collectives.
    assert!(err("ranks 2\nrank 0\nsned 1 8\n")
        .contains("unknown operation `sned`; did you mean `send`?"));
    assert!(err("ranks 2\nrank 0\nallreduse 8\n").contains("did you mean `allreduce`?"));
    assert!(err("rank 0\n").contains("must start with `ranks N`"));
    assert!(err("ranks 2\nrank 0\ncomplete h\n").contains("request 'h' was not created"));
    assert!(err("ranks 2\nrank 0\nput 1 4 colour=red\n").contains("field `colour`"));
    assert!(err("ranks 2\nrank 1\nregion_begin a\n").contains("never closed"));
    assert!(err("ranks 2\nrank 0\nput 3 4 @p.c:7\n").starts_with("p.c:7: field `dst`"));
    assert!(err("ranks 2\nrank 0\nregion_begin \"a b\n").contains("unterminated"));
    assert!(err("ranks 2\nrank 0\n@p.c:3\n")
        .starts_with("bad.sched:3:1: a source location without an operation"));
    assert!(err("ranks 2\nrank 0\nsend 1 4 tag=-1\n")
        .starts_with("bad.sched:3:10: field `tag`: tag -1 is out of range"));
}
