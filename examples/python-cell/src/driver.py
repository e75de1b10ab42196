# The driver python-cell passes to the confined interpreter with `-c`. It evaluates a snippet the
# way a cell shows it, and speaks the `cell` crate's protocols.
#
# A request ([`request::encode`]) is one line of decimal byte counts, the snippet's and then each
# input's name and JSON text, followed by those bytes, UTF-8.
#
# Cold (no argument): one request on standard input, to its end.
#   standard output  the value (exit 0), or the error, `Type: message` (exit 1)
#   standard error   what the snippet printed, and the traceback of an error
# Warm (`--warm`): requests one after another, each framed by the `cell` crate as `LEN\n` and
#   LEN bytes; after each, the answer `STATUS LEN\n` and LEN bytes (0 a value, 1 an error) on
#   the stream that was standard output, and what the snippet printed on standard error, which
#   file descriptor 1 then also names. End of input ends the runner, status 0. A cell reading
#   standard input finds it empty, as in a cold cell.
#
# Each snippet runs as a module in a namespace of its own holding its inputs (each JSON text
# decoded). If its last statement is an expression, that expression is the value, shown as str()
# shows it; None, or no final expression, shows nothing.
#
# A cold cell's start is most of its cost, so this imports nothing it does not use: no `ast`
# (a lone expression compiles in "eval" mode; `_ast`, built in, splits the rest), no `json` for a
# whole number, `traceback` only for an error; and it ends with `_exit`, skipping the
# interpreter's shutdown. The interpreter runs with `-S`, so the package folders `site` would
# add are added here, without `site`'s own work.
import sys

CELL = "<cell>"


def add_packages():
    version = "%d.%d" % sys.version_info[:2]
    prefix = sys.base_prefix
    for folder in (
        f"{prefix}/local/lib/python{version}/dist-packages",
        f"{prefix}/lib/python3/dist-packages",
        f"{prefix}/lib/python{version}/dist-packages",
        f"{prefix}/lib/python{version}/site-packages",
    ):
        if folder not in sys.path:
            sys.path.append(folder)


# The audit events that start a process, each with the place of the program's name among its
# arguments (None: it has none).
PROCESS_STARTS = {
    "os.system": 0,
    "subprocess.Popen": 0,
    "os.posix_spawn": 0,
    "os.spawn": 1,
    "os.fork": None,
    "os.forkpty": None,
}


def no_process(event, args):
    # The sandbox lets a cell start no process: os.system's shell could not run and it returned
    # 127's status, 32512, as if it had; subprocess, os.popen, multiprocessing and os.fork said
    # only "Operation not permitted". One audit hook says why, the same way for every route, and
    # stays for the interpreter's life: no cell can remove it, nor a later cell find it undone.
    # It explains a refusal, it enforces nothing; the sandbox does that.
    if event in PROCESS_STARTS:
        at = PROCESS_STARTS[event]
        message = "a cell cannot start a process"
        if at is None:
            raise PermissionError(13, message)
        name = args[at]
        if isinstance(name, bytes):
            # os.system's command arrives encoded.
            name = name.decode("utf-8", "surrogateescape")
        raise PermissionError(13, message, name)


def decode(text):
    digits = text[1:] if text[:1] == "-" else text
    if digits.isascii() and digits.isdigit() and (digits == "0" or digits[0] != "0"):
        return int(text)
    import json

    return json.loads(text)


def parse(data):
    header, _, body = data.partition(b"\n")
    sizes = [int(size) for size in header.split()]
    if not sizes or len(sizes) % 2 != 1 or sum(sizes) != len(body):
        raise ValueError("the request is malformed")
    fields = []
    at = 0
    for size in sizes:
        fields.append(body[at : at + size].decode("utf-8"))
        at += size
    return fields[0], list(zip(fields[1::2], fields[2::2]))


def evaluate(data):
    code, inputs = parse(data)
    names = {"__name__": "__cell__"}
    if inputs:
        import keyword

        for name, text in inputs:
            if not name.isidentifier() or keyword.iskeyword(name):
                raise ValueError(f"input {name!r} is not a Python name")
            names[name] = decode(text)
    try:
        expression = compile(code, CELL, "eval")
    except SyntaxError:
        expression = None
    if expression is not None:
        return eval(expression, names)
    import _ast

    tree = compile(code, CELL, "exec", _ast.PyCF_ONLY_AST)
    last = None
    if tree.body and isinstance(tree.body[-1], _ast.Expr):
        last = _ast.Expression(tree.body.pop().value)
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


def answer(data, errors):
    """Runs one request: (0, the value) or (1, the error), each as UTF-8 bytes."""
    sys.stdout = sys.stderr = errors
    try:
        value = evaluate(data)
        text = "" if value is None else str(value)
        status = 0
    except BaseException as error:
        import traceback

        tb = cell_frames(error.__traceback__)
        traceback.print_exception(type(error), error, tb, file=errors)
        text = traceback.format_exception_only(type(error), error)[-1].strip()
        status = 1
        # The traceback's frames lead back to this one, which would hold them: a cycle that
        # only the garbage collector frees, keeping the cell's objects (an open temporary file
        # filling the scratch folder) alive into the cells after it.
        del tb
    errors.flush()
    return status, text.encode("utf-8", "backslashreplace")


def cold():
    status, text = answer(sys.stdin.buffer.read(), sys.stderr)
    sys.__stdout__.buffer.write(text)
    sys.__stdout__.buffer.flush()
    return status


def warm():
    import os

    # The answers go on a descriptor of their own; 1 becomes standard error, so that nothing a
    # cell writes on it, from Python or from C, can be taken for an answer by accident.
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    # Likewise the requests: a cell reading standard input finds it empty, as a cold cell does.
    requests = os.fdopen(os.dup(0), "rb")
    empty, writer = os.pipe()
    os.close(writer)
    os.dup2(empty, 0)
    os.close(empty)
    errors = sys.stderr
    while True:
        line = requests.readline()
        if not line:
            return 0
        size = int(line)
        data = requests.read(size)
        if len(data) != size:
            return 0
        status, text = answer(data, errors)
        # Buffered, so that an answer longer than the pipe holds is written whole.
        answers.write(b"%d %d\n%s" % (status, len(text), text))
        answers.flush()


add_packages()
sys.addaudithook(no_process)
import posix  # noqa: E402  (built in, loaded already)

status = warm() if sys.argv[1:] == ["--warm"] else cold()
# Everything is written and flushed: the interpreter's own shutdown (collecting every object,
# tearing down every module) would only add milliseconds to each cell, and run what a cell
# registered with atexit, which a cell has no use for.
posix._exit(status)
