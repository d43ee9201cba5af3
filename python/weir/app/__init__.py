"""weir.app: TF1's tf.app — run(main, argv) and the flags module.

    def main(argv):
        ...
    if __name__ == "__main__":
        wr.app.run()          # main defaults to the __main__ module's main

run() parses the command line into weir.flags.FLAGS (undefined flags are
tolerated and passed on to main, as TF's tf.app.run does), calls
main(remaining argv) and exits with main's return value (sys.exit). --help
(or -h, --helpfull, --helpshort) prints the flags and exits with status 1
(as TF's, through absl); a bad flag value prints the error and exits with
status 1.
"""
import sys as _sys

from weir import flags  # noqa: F401  (tf.app.flags is tf.flags)

__all__ = ["run", "flags"]

_HELP = ("--help", "-help", "-h", "--helpfull", "--helpshort", "-?")


def _usage(main_module):
    doc = getattr(main_module, "__doc__", None) or ""
    text = doc.strip()
    program = _sys.argv[0] if _sys.argv else "program"
    head = text + "\n\n" if text else ""
    return "%sflags (%s):\n%s" % (head, program, flags.FLAGS.get_help())


def run(main=None, argv=None):
    """Parses flags from argv (sys.argv by default), calls main(argv left
    over) and exits with what it returns."""
    main_module = _sys.modules.get("__main__")
    if main is None:
        main = getattr(main_module, "main", None)
        if main is None:
            raise ValueError("weir.app.run: no main given and the __main__ module has none")
    args = list(_sys.argv if argv is None else argv) or [""]
    before_dashes = args[1:args.index("--")] if "--" in args[1:] else args[1:]
    if any(a in _HELP for a in before_dashes):
        print(_usage(main_module))
        _sys.exit(1)
    try:
        remaining = flags.FLAGS(args, known_only=True)
    except flags.Error as e:
        _sys.stderr.write("FATAL Flags parsing error: %s\n" % e)
        _sys.stderr.write("Pass --helpshort or --helpfull to see help on flags.\n")
        _sys.exit(1)
    _sys.exit(main(remaining))
