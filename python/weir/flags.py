"""weir.flags (also weir.app.flags): TF1's tf.flags / tf.app.flags, the
command-line flags of absl.flags as TF re-exports them, without absl.

    flags = wr.app.flags
    flags.DEFINE_integer("steps", 100, "training steps", lower_bound=1)
    flags.DEFINE_boolean("fast", False, "skip the checks")
    FLAGS = flags.FLAGS
    def main(argv):            # argv: the program and its non-flag arguments
        print(FLAGS.steps, FLAGS.fast)
    wr.app.run(main)          # parses sys.argv: --steps=5, --steps 5, --fast, --nofast

Contract (absl's, as TF 2.21 shows it): FLAGS(argv) parses argv[1:] and
returns argv[0] followed by the arguments that are not flags ("--" ends the
flags, and
stays among them when known_only); "--name=value", "-name=value" and "--name value" set a flag, a
boolean also by "--name" / "--noname" / "--name=false"; an undefined flag is
an UnrecognizedFlagError unless known_only=True, which leaves it among the
returned arguments; a bad value is an IllegalFlagValueError naming the flag.
Reading FLAGS.x before any parsing parses sys.argv first, tolerating
undefined flags (TF's wrapper of absl's FLAGS does the same).
"""
import sys as _sys

__all__ = [
    "Error", "UnrecognizedFlagError", "IllegalFlagValueError", "DuplicateFlagError",
    "UnparsedFlagAccessError", "ValidationError", "Flag", "FlagValues", "FLAGS",
    "DEFINE", "DEFINE_string", "DEFINE_integer", "DEFINE_float", "DEFINE_boolean", "DEFINE_bool",
    "DEFINE_enum", "DEFINE_list", "DEFINE_spaceseplist", "DEFINE_multi_string",
    "DEFINE_multi_integer", "DEFINE_multi_float", "mark_flag_as_required",
    "mark_flags_as_required", "register_validator", "validator",
]


class Error(Exception):
    """The base of flag errors (absl.flags.Error)."""


class UnrecognizedFlagError(Error):
    def __init__(self, flagname, flagvalue=""):
        self.flagname = flagname
        self.flagvalue = flagvalue
        super().__init__("Unknown command line flag '%s'" % flagname)


class IllegalFlagValueError(Error):
    pass


class DuplicateFlagError(Error):
    pass


class UnparsedFlagAccessError(Error):
    pass


class ValidationError(Error):
    pass


_TRUE = ("true", "t", "1", "yes", "y")
_FALSE = ("false", "f", "0", "no", "n")


def _parse_bool(text):
    if isinstance(text, bool):
        return text
    if isinstance(text, int) and text in (0, 1):
        return bool(text)
    if isinstance(text, str):
        if text.lower() in _TRUE:
            return True
        if text.lower() in _FALSE:
            return False
    raise ValueError("Non-boolean argument to boolean flag: %r" % (text,))


class Flag:
    """One flag: name, help, default and current value; `parse(text)` sets
    the value from command-line text (a ValueError when it is not valid)."""

    def __init__(self, name, default, help, parser, short_name=None, boolean=False,  # noqa: A002
                 multi=False, type_name="string"):
        self.name = name
        self.help = help
        self.short_name = short_name
        self.boolean = boolean
        self.multi = multi
        self.type_name = type_name
        self.present = 0
        self.using_default_value = True
        self.validators = []
        self._parser = parser
        self.default = self._convert(default)
        self.value = self.default

    def _convert(self, value):
        if value is None:
            return [] if self.multi else None
        if self.multi:
            items = value if isinstance(value, (list, tuple)) else [value]
            return [self._parser(v) for v in items]
        return self._parser(value)

    def parse(self, text):
        parsed = self._parser(text)
        if self.multi:
            # The first use on the command line replaces the default.
            self.value = ([] if self.using_default_value else list(self.value)) + [parsed]
        else:
            self.value = parsed
        self.present += 1
        self.using_default_value = False

    def __repr__(self):
        return "<Flag --%s=%r>" % (self.name, self.value)


class FlagValues:
    """The registry of defined flags and their values (absl's FlagValues)."""

    def __init__(self):
        # absl keeps its flags in __dict__["__flags"] (TF1 scripts read
        # FLAGS.__flags); the same here.
        self.__dict__["__flags"] = {}
        self.__dict__["_parsed"] = False
        self.__dict__["_required"] = []

    def _flag_dict(self):
        return self.__dict__["__flags"]

    def _register(self, flag):
        flags = self._flag_dict()
        for key in filter(None, (flag.name, flag.short_name)):
            if key in flags:
                raise DuplicateFlagError("The flag '%s' is defined twice." % key)
        flags[flag.name] = flag
        if flag.short_name:
            flags[flag.short_name] = flag

    def __getattr__(self, name):
        flags = self.__dict__["__flags"]
        if name not in flags:
            raise AttributeError(name)
        if not self.__dict__["_parsed"]:
            # TF's wrapper of absl's FLAGS: the first read parses sys.argv.
            self(list(_sys.argv) or [""], known_only=True)
        return flags[name].value

    def __setattr__(self, name, value):
        flags = self._flag_dict()
        if name not in flags:
            raise UnrecognizedFlagError(name, value)
        flag = flags[name]
        flag.value = value
        flag.using_default_value = False
        self._validate(flag)

    def __delattr__(self, name):
        flags = self._flag_dict()
        if name not in flags:
            raise AttributeError(name)
        flag = flags[name]
        for key in filter(None, (flag.name, flag.short_name)):
            flags.pop(key, None)

    def __contains__(self, name):
        return name in self._flag_dict()

    def __getitem__(self, name):
        return self._flag_dict()[name]

    def __iter__(self):
        return iter(self._flag_dict())

    def __len__(self):
        return len(self._flag_dict())

    def is_parsed(self):
        return self.__dict__["_parsed"]

    def mark_as_parsed(self):
        self.__dict__["_parsed"] = True

    def unparse_flags(self):
        """Back to every default and unparsed."""
        for flag in set(self._flag_dict().values()):
            flag.value = flag.default
            flag.present = 0
            flag.using_default_value = True
        self.__dict__["_parsed"] = False

    def flag_values_dict(self):
        return {name: flag.value for name, flag in self._flag_dict().items()
                if name == flag.name}

    def get_flag_value(self, name, default):
        flag = self._flag_dict().get(name)
        return default if flag is None else flag.value

    def set_default(self, name, value):
        flag = self._flag_dict().get(name)
        if flag is None:
            raise UnrecognizedFlagError(name, value)
        flag.default = flag._convert(value)
        if flag.using_default_value:
            flag.value = flag.default

    def _validate(self, flag):
        for checker, message in flag.validators:
            try:
                ok = checker(flag.value)
            except ValidationError as e:
                ok, message = False, str(e)
            if not ok:
                raise IllegalFlagValueError("flag --%s=%r: %s" % (flag.name, flag.value, message))

    def __call__(self, argv, known_only=False):
        """Parses argv[1:]; returns argv[0] and the arguments left over."""
        if isinstance(argv, str) or not hasattr(argv, "__iter__"):
            raise TypeError("argv should be a tuple/list of strings, not %r" % (argv,))
        argv = list(argv)
        if not argv:
            raise ValueError("argv cannot be an empty list, and must contain the program name "
                             "as the first element.")
        flags = self._flag_dict()
        args = argv[1:]
        remaining = []
        i = 0
        while i < len(args):
            arg = args[i]
            i += 1
            if not isinstance(arg, str):
                raise TypeError("argv must hold strings, got %r" % (arg,))
            if arg == "--":
                # absl keeps the "--" for the program when known_only.
                remaining.extend(args[i - 1:] if known_only else args[i:])
                break
            if not arg.startswith("-") or arg == "-":
                remaining.append(arg)
                continue
            body = arg[2:] if arg.startswith("--") else arg[1:]
            name, eq, value = body.partition("=")
            flag = flags.get(name)
            if flag is None:
                negated = flags.get(name[2:]) if name.startswith("no") and not eq else None
                if negated is not None and negated.boolean:
                    negated.parse(False)
                    continue
                if known_only:
                    remaining.append(arg)
                    continue
                raise UnrecognizedFlagError(name, value)
            if not eq:
                if flag.boolean:
                    value = "true"
                elif i < len(args):
                    value = args[i]
                    i += 1
                else:
                    raise Error("Missing value for flag " + arg)
            try:
                flag.parse(value)
            except (ValueError, TypeError) as e:
                raise IllegalFlagValueError("flag --%s=%s: %s" % (flag.name, value, e)) from None
            self._validate(flag)
        self.mark_as_parsed()
        for name in self.__dict__["_required"]:
            if flags[name].value is None:
                raise IllegalFlagValueError("flag --%s=None: Flag --%s must have a value other "
                                            "than None." % (name, name))
        return argv[:1] + remaining

    def get_help(self):
        lines = []
        for name, flag in sorted(self._flag_dict().items()):
            if name != flag.name:
                continue
            short = " (-%s)" % flag.short_name if flag.short_name else ""
            lines.append("  --%s%s: %s\n    (default: %r)" % (name, short, flag.help,
                                                            flag.default))
        return "\n".join(lines)

    def __str__(self):
        return self.get_help()


FLAGS = FlagValues()


def DEFINE(parser, name, default, help, flag_values=FLAGS, short_name=None,  # noqa: N802,A002
           required=False, type_name="string", boolean=False, multi=False, **unused):
    """Defines a flag whose command-line text `parser` turns into its value."""
    if not isinstance(name, str) or not name or name.startswith("-") or "=" in name:
        raise Error("Flag name must be a non-empty string without '-' prefix or '=', got %r"
                    % (name,))
    try:
        flag = Flag(name, default, help, parser, short_name=short_name, boolean=boolean,
                    multi=multi, type_name=type_name)
    except (ValueError, TypeError) as e:
        raise IllegalFlagValueError("flag --%s=%r: %s" % (name, default, e)) from None
    flag_values._register(flag)
    if required:
        mark_flag_as_required(name, flag_values)
    return flag


def _parse_string(text):
    return text if isinstance(text, str) else str(text)


def _number_parser(kind, lower_bound, upper_bound):
    if lower_bound is not None and upper_bound is not None:
        what = "a value in the range [%s, %s]" % (lower_bound, upper_bound)
    elif lower_bound == 0:
        what = "a non-negative %s" % kind.__name__.replace("int", "integer")
    elif lower_bound == 1 and kind is int:
        what = "a positive integer"
    elif upper_bound == 0:
        what = "a non-positive %s" % kind.__name__.replace("int", "integer")
    elif lower_bound is not None:
        what = "a value >= %s" % lower_bound
    elif upper_bound is not None:
        what = "a value <= %s" % upper_bound
    else:
        what = None

    def parse(text):
        if isinstance(text, bool):
            raise TypeError("expected %s, got a bool" % kind.__name__)
        if kind is int and isinstance(text, str):
            value = int(text, 0) if text.strip().lower().startswith(("0x", "0o", "0b")) \
                else int(text)
        elif kind is int and isinstance(text, float):
            if not text.is_integer():
                raise ValueError("%r is not an integer" % text)
            value = int(text)
        else:
            value = kind(text)
        if (lower_bound is not None and value < lower_bound) or \
                (upper_bound is not None and value > upper_bound):
            raise ValueError("%s is not %s" % (value, what))
        return value
    return parse


def DEFINE_string(name, default, help, flag_values=FLAGS, **args):  # noqa: N802,A002
    return DEFINE(_parse_string, name, default, help, flag_values, **args)


def DEFINE_integer(name, default, help, lower_bound=None, upper_bound=None,  # noqa: N802,A002
                   flag_values=FLAGS, **args):
    return DEFINE(_number_parser(int, lower_bound, upper_bound), name, default, help, flag_values,
                  type_name="int", **args)


def DEFINE_float(name, default, help, lower_bound=None, upper_bound=None,  # noqa: N802,A002
                 flag_values=FLAGS, **args):
    return DEFINE(_number_parser(float, lower_bound, upper_bound), name, default, help,
                  flag_values, type_name="float", **args)


def DEFINE_boolean(name, default, help, flag_values=FLAGS, **args):  # noqa: N802,A002
    return DEFINE(_parse_bool, name, default, help, flag_values, type_name="bool", boolean=True,
                  **args)


DEFINE_bool = DEFINE_boolean


def DEFINE_enum(name, default, enum_values, help, flag_values=FLAGS, **args):  # noqa: N802,A002
    enum_values = list(enum_values)
    if not enum_values:
        raise ValueError("enum_values cannot be empty")

    def parse(text):
        if text not in enum_values:
            raise ValueError("value should be one of <%s>" % "|".join(enum_values))
        return text
    return DEFINE(parse, name, default, help, flag_values, **args)


def _list_parser(separator):
    def parse(text):
        if isinstance(text, (list, tuple)):
            return [str(v) for v in text]
        if separator is None:
            return text.split()
        return [item.strip() for item in text.split(separator)] if text.strip() else []
    return parse


def DEFINE_list(name, default, help, flag_values=FLAGS, **args):  # noqa: N802,A002
    """A comma-separated list of strings ("a,b,c")."""
    return DEFINE(_list_parser(","), name, default, help, flag_values, type_name="list", **args)


def DEFINE_spaceseplist(name, default, help, flag_values=FLAGS, **args):  # noqa: N802,A002
    return DEFINE(_list_parser(None), name, default, help, flag_values, type_name="list",
                  **args)


def DEFINE_multi_string(name, default, help, flag_values=FLAGS, **args):  # noqa: N802,A002
    """A flag that may be given several times; its value is the list."""
    return DEFINE(_parse_string, name, default, help, flag_values, multi=True, **args)


def DEFINE_multi_integer(name, default, help, lower_bound=None, upper_bound=None,  # noqa: N802
                         flag_values=FLAGS, **args):
    return DEFINE(_number_parser(int, lower_bound, upper_bound), name, default, help,
                  flag_values, multi=True, type_name="int", **args)


def DEFINE_multi_float(name, default, help, lower_bound=None, upper_bound=None,  # noqa: N802
                       flag_values=FLAGS, **args):
    return DEFINE(_number_parser(float, lower_bound, upper_bound), name, default, help,
                  flag_values, multi=True, type_name="float", **args)


def mark_flag_as_required(flag_name, flag_values=FLAGS):
    """Parsing fails unless the flag ends with a value other than None."""
    if flag_name not in flag_values:
        raise UnrecognizedFlagError(flag_name)
    required = flag_values.__dict__["_required"]
    if flag_name not in required:
        required.append(flag_name)


def mark_flags_as_required(flag_names, flag_values=FLAGS):
    for name in flag_names:
        mark_flag_as_required(name, flag_values)


def register_validator(flag_name, checker, message="Flag validation failed",
                       flag_values=FLAGS):
    """checker(value) -> bool, run whenever the flag is parsed or set."""
    if flag_name not in flag_values:
        raise UnrecognizedFlagError(flag_name)
    flag_values[flag_name].validators.append((checker, message))


def validator(flag_name, message="Flag validation failed", flag_values=FLAGS):
    """A decorator form of register_validator."""
    def decorate(checker):
        register_validator(flag_name, checker, message, flag_values)
        return checker
    return decorate
