"""User-facing errors: the CLI prints these as one line and exits non-zero, without a traceback."""


class LakecdcError(Exception):
    """A problem the user can fix (bad configuration, unreachable service, missing prerequisite)."""


class ConfigError(LakecdcError):
    """The configuration file or an engine/source setting is invalid."""


class EngineError(LakecdcError):
    """The Spark engine could not be started or reached."""
