# The driver python-cell passes to the confined interpreter with `-c`. It evaluates a snippet the
# way a cell shows it, and speaks the `cell` crate's protocol:
#
#   standard input   one JSON object: {"code": SNIPPET, "inputs": {NAME: JSON_TEXT, ...}}
#   standard output  the value (exit 0), or the error, `Type: message` (exit 1)
#   standard error   what the snippet printed, and the traceback of an error
#
# The snippet runs as a module in a namespace of its own holding the inputs (each JSON text
# decoded: numbers, strings, lists, objects). If its last statement is an expression, that
# expression is the value, shown as str() shows it; None, or no final expression, shows nothing.
# What the snippet prints goes to standard error, so that standard output holds the value alone.
import ast
import json
import keyword
import sys
import traceback

CELL = "<cell>"


def evaluate(request):
    names = {"__name__": "__cell__"}
    for name, text in request["inputs"].items():
        if not name.isidentifier() or keyword.iskeyword(name):
            raise ValueError(f"input {name!r} is not a Python name")
        names[name] = json.loads(text)
    tree = ast.parse(request["code"], CELL, "exec")
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    exec(compile(tree, CELL, "exec"), names)
    if last is None:
        return None
    return eval(compile(last, CELL, "eval"), names)


def cell_frames(tb):
    # The traceback from the snippet's first frame on, or none: the driver's own frames say
    # nothing about the snippet (a syntax error shows its line and column without them).
    while tb is not None and tb.tb_frame.f_code.co_filename != CELL:
        tb = tb.tb_next
    return tb


def main():
    result = sys.stdout.buffer
    sys.stdout = sys.stderr
    try:
        request = json.loads(sys.stdin.buffer.read().decode("utf-8"))
        value = evaluate(request)
        text = "" if value is None else str(value)
    except BaseException as error:
        tb = cell_frames(error.__traceback__)
        traceback.print_exception(type(error), error, tb, file=sys.stderr)
        summary = traceback.format_exception_only(type(error), error)[-1].strip()
        sys.stderr.flush()
        result.write(summary.encode("utf-8", "backslashreplace"))
        result.flush()
        return 1
    sys.stderr.flush()
    result.write(text.encode("utf-8", "backslashreplace"))
    result.flush()
    return 0


sys.exit(main())
